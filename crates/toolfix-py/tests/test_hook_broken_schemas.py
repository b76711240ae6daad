"""A tool whose schema toolfix cannot read (here a type JSON Schema does not have) does not
stop the hooks: calls to it go on as the framework had them, for the framework's own
validation; the other tools are repaired as usual."""

import asyncio
import json

import toolfix
from toolfix.hooks._common import toolset_for

ODD = {"name": "odd", "parameters": {"type": "object", "properties": {"x": {"type": "float"}}}}
GOOD = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def test_partial_tool_sets():
    tools = toolfix.ToolSet([GOOD, ODD], partial=True, read_only=["odd", "get_weather"])
    assert tools.names == ["get_weather"] and tools.broken == ["odd"]
    assert tools.is_read_only("get_weather")
    assert "definition" in tools.repair_call("odd", '{"x": 1}').message
    assert toolset_for([GOOD, ODD]).broken == ["odd"]


def test_langchain_passes_calls_to_a_broken_tool_on():
    from langchain_core.messages import AIMessage

    from toolfix.hooks.langchain import fix_ai_message

    tools = toolset_for([GOOD, ODD])
    message = AIMessage(content="", tool_calls=[
        {"name": "odd", "args": {"x": "1"}, "id": "a"},
        {"name": "get_weather", "args": {"city": "Rome"}, "id": "b"},
    ])
    fixed = fix_ai_message(message, tools)
    assert [c["name"] for c in fixed.tool_calls] == ["odd", "get_weather"]
    assert fixed.tool_calls[0]["args"] == {"x": "1"} and fixed.invalid_tool_calls == []


def test_litellm_passes_calls_to_a_broken_tool_on():
    import litellm
    from litellm.proxy._types import UserAPIKeyAuth

    from toolfix.hooks.litellm import ToolfixCallback

    tools = [{"type": "function", "function": GOOD}, {"type": "function", "function": ODD}]
    data = {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}], "tools": tools}
    response = litellm.completion(**data, mock_tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "odd", "arguments": '{"x": "1"}'}},
        {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{'city': 'Rome'}"}},
    ])
    fixed = asyncio.run(ToolfixCallback().async_post_call_success_hook(data=data, user_api_key_dict=UserAPIKeyAuth(), response=response))
    calls = fixed.choices[0].message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("odd", {"x": "1"}), ("get_weather", {"city": "Rome"})]
    assert "refused" not in (fixed.choices[0].message.content or "")
