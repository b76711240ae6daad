"""The LiteLLM callback against the real litellm: its responses and stream chunks (made by
litellm's own mock completions, offline), the hooks called as LiteLLM's proxy calls them.
A client then runs the tool from what it received: with repaired arguments, or it reads
the refusal."""

import asyncio
import json

import litellm
from litellm.proxy._types import UserAPIKeyAuth
from litellm.types.utils import ChatCompletionDeltaToolCall, Delta, Function, ModelResponseStream, StreamingChoices

from toolfix.hooks.litellm import ToolfixCallback

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "transfer", "parameters": {"type": "object", "properties": {"account": {"type": "string"}, "amount": {"type": "number"}}, "required": ["account", "amount"]}}},
]
DATA = {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS}


def completion(**kwargs):
    return litellm.completion(model="gpt-4o", messages=DATA["messages"], tools=TOOLS, **kwargs)


def hook(response):
    return asyncio.run(ToolfixCallback().async_post_call_success_hook(data=DATA, user_api_key_dict=UserAPIKeyAuth(), response=response))


def run_tool(call):
    """What a client does with a call it received."""
    args = json.loads(call["function"]["arguments"] if isinstance(call, dict) else call.function.arguments)
    return args


def test_broken_arguments_are_repaired():
    response = completion(mock_tool_calls=[{"id": "call_1", "type": "function", "function": {"name": "GetWeather", "arguments": "{'city': 'Paris', 'days': '3',}"}}])
    fixed = hook(response)
    (call,) = fixed.choices[0].message.tool_calls
    assert call.id == "call_1" and call.function.name == "get_weather"
    assert run_tool(call) == {"city": "Paris", "days": 3}
    assert fixed.choices[0].finish_reason == "tool_calls"


def test_a_call_in_the_content_moves_to_tool_calls():
    response = completion(mock_response='Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>')
    fixed = hook(response)
    message = fixed.choices[0].message
    assert message.content == "Checking."
    assert run_tool(message.tool_calls[0]) == {"city": "Oslo"}
    assert fixed.choices[0].finish_reason == "tool_calls"


def test_a_refused_call_is_not_passed_on_and_the_text_says_why():
    response = completion(mock_tool_calls=[{"id": "call_1", "type": "function", "function": {"name": "transfer", "arguments": '{"account": "A-7", "amount": 5, "amount": 500}'}}])
    fixed = hook(response)
    message = fixed.choices[0].message
    assert not message.tool_calls
    assert "/amount" in message.content
    assert fixed.choices[0].finish_reason == "stop"


def test_valid_responses_are_left_alone():
    response = completion(mock_tool_calls=[{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}])
    assert hook(response) is None
    assert hook(completion(mock_response="Hello.")) is None


def stream_through(chunks):
    async def source():
        for c in chunks:
            yield c

    async def go():
        out = []
        async for c in ToolfixCallback().async_post_call_streaming_iterator_hook(UserAPIKeyAuth(), source(), DATA):
            out.append(c)
        return out

    return asyncio.run(go())


def chunk(delta, finish=None):
    return ModelResponseStream(id="chatcmpl-1", model="gpt-4o", choices=[StreamingChoices(index=0, delta=delta, finish_reason=finish)])


def assemble(chunks):
    text, calls, finish = "", {}, None
    for c in chunks:
        choice = c.choices[0]
        text += choice.delta.content or ""
        for tc in choice.delta.tool_calls or []:
            entry = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            entry["id"] = tc.id or entry["id"]
            entry["name"] += tc.function.name or ""
            entry["arguments"] += tc.function.arguments or ""
        finish = choice.finish_reason or finish
    return text, [calls[i] for i in sorted(calls)], finish


def test_streamed_tool_call_deltas_are_repaired():
    args = "{'city': 'Paris', 'days': '3'"
    chunks = [chunk(Delta(tool_calls=[ChatCompletionDeltaToolCall(index=0, id="call_1", type="function", function=Function(name="get_weather", arguments=""))]))]
    chunks += [chunk(Delta(tool_calls=[ChatCompletionDeltaToolCall(index=0, function=Function(arguments=args[i:i + 4]))])) for i in range(0, len(args), 4)]
    chunks.append(chunk(Delta(), "tool_calls"))
    text, calls, finish = assemble(stream_through(chunks))
    assert calls == [{"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris", "days": 3}'}]
    assert finish == "tool_calls"


def test_streamed_text_with_a_leaked_call():
    response = completion(mock_response='Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Lima"}}</tool_call>', stream=True)
    chunks = list(response)
    assert len(chunks) > 2
    text, calls, finish = assemble(stream_through(chunks))
    assert "<tool_call>" not in text and text.startswith("Let me check.")
    assert [json.loads(c["arguments"]) for c in calls] == [{"city": "Lima"}]
    assert finish == "tool_calls"
