"""toolfix basics: lenient JSON, one call repaired or refused, a whole reply fixed.

    python crates/toolfix-py/examples/basics.py
"""

import toolfix

# JSON, as json_repair.loads would read it (nothing invented, nothing cut off completed).
print(toolfix.loads("```json\n{'city': 'Paris', 'days': 3,}\n```"))

tools = toolfix.ToolSet.from_openai([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "transfer", "parameters": {"type": "object",
        "properties": {"account": {"type": "string"}, "amount": {"type": "number"}}, "required": ["account", "amount"]}}},
])

# One call: repaired against its schema.
out = tools.repair_call("GetWeather", "{'city': 'Paris', 'days': '3'}")
print(out.name, out.arguments, [r["kind"] for r in out.repairs])

# A call cut off by the token limit, to a tool that may change things: refused, with a
# message the model can act on.
out = tools.repair_call("transfer", '{"account": "A-7", "amount": 50')
print(out.ok, out.message.splitlines()[0])

# A whole reply: the call the model left in its text becomes a call.
reply = tools.fix_reply(content='Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>')
print(repr(reply.content), [(c.name, c.arguments) for c in reply.calls])
