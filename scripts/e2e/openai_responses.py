"""End to end with the official OpenAI SDK's Responses API: a client whose base_url is the
toolfix proxy gets a repaired `function_call` from a fake upstream whose `arguments` have a
trailing comma and `days` as a string (see `toolfix_proxy::fake::demo`), with
`responses.create`, streamed and not. Then model `fake-thinking`, which leaves its call in a
`reasoning` item's text (as gpt-oss does): the call comes back as a `function_call` after
the reasoning item, which is untouched. Then model `fake-thinking-text`, which writes its
reasoning in the output text (`<think>…</think>`) before a Hermes call: the reasoning comes
back as a `reasoning` item of the proxy's own (id `rs_toolfix…`), streamed as
`response.reasoning_text.delta` events, and when the client sends it back it is dropped by
the proxy (the fake upstream, like a strict server, refuses reasoning items it did not
write).

    python scripts/e2e/openai_responses.py http://127.0.0.1:8787/v1

Prints one line per check and exits non-zero on the first failure.
"""

import json
import sys

import openai

TOOLS = [{
    "type": "function",
    "name": "get_weather",
    "description": "Weather forecast for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}]
INPUT = [{"role": "user", "content": "What is the weather in Paris for the next 3 days?"}]


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        sys.exit(1)


def essence(items):
    """What a client acts on in output items (the SDK's stream helper gives its own `Parsed…`
    classes, with a few more fields)."""
    return [(i.type, i.id, getattr(i, "call_id", None), getattr(i, "name", None), getattr(i, "arguments", None),
             [c.text for c in (getattr(i, "content", None) or [])]) for i in items]


def unparsed(items):
    """The items as plain data, without what the SDK's stream helper adds (`parsed`,
    `parsed_arguments`)."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in ("parsed", "parsed_arguments")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return [strip(i.model_dump()) for i in items]


def main(base_url):
    client = openai.OpenAI(base_url=base_url, api_key="sk-not-checked", max_retries=0)

    r = client.responses.create(model="fake-model", input=INPUT, tools=TOOLS)
    calls = [i for i in r.output if i.type == "function_call"]
    check("one function_call", len(calls) == 1, r.output)
    call = calls[0]
    check("its arguments repaired", json.loads(call.arguments) == {"city": "Paris", "days": 3}, call.arguments)
    check("its ids kept", (call.id, call.call_id) == ("fc_fake1", "call_fake1"), (call.id, call.call_id))
    report = (r.model_extra or {}).get("x_toolfix", {})
    check("the report says repaired", report.get("calls", [{}])[0].get("outcome") == "repaired", report)

    done_args, item_args, final = None, None, None
    for event in client.responses.create(model="fake-model", input=INPUT, tools=TOOLS, stream=True):
        if event.type == "response.function_call_arguments.done":
            done_args = event.arguments
        elif event.type == "response.output_item.done" and event.item.type == "function_call":
            item_args = event.item.arguments
        elif event.type == "response.completed":
            final = event.response
    final_calls = [i for i in final.output if i.type == "function_call"]
    check("streamed: the same arguments in .done, item done and completed",
          done_args == item_args == final_calls[0].arguments == call.arguments, (done_args, item_args, final_calls))

    history = INPUT + [call.model_dump(exclude_none=True),
                       {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24C"}]
    r2 = client.responses.create(model="fake-model", input=history, tools=TOOLS)
    check("the next turn answers in prose", "sunny" in r2.output_text, r2.output_text)

    # A call left in the reasoning.
    r = client.responses.create(model="fake-thinking", input=INPUT, tools=TOOLS)
    check("reasoning, then function_call", [i.type for i in r.output] == ["reasoning", "function_call"], r.output)
    check("the reasoning item untouched", r.output[0].id == "rs_fake1" and "<tool_call>" in r.output[0].content[0].text,
          r.output[0])
    call = r.output[1]
    check("the call from the reasoning, repaired", (call.name, json.loads(call.arguments)) ==
          ("get_weather", {"city": "Paris", "days": 3}), call)
    final = None
    for event in client.responses.create(model="fake-thinking", input=INPUT, tools=TOOLS, stream=True):
        if event.type == "response.completed":
            final = event.response
    check("streamed: the same output", [i.model_dump() for i in final.output] == [i.model_dump() for i in r.output],
          (final.output, r.output))
    history = INPUT + [i.model_dump(exclude_none=True) for i in r.output] + [
        {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24C"}]
    r2 = client.responses.create(model="fake-thinking", input=history, tools=TOOLS)
    check("the next turn answers in prose", "sunny" in r2.output_text, r2.output_text)

    # Reasoning written in the text comes back as a reasoning item of the proxy's own.
    r = client.responses.create(model="fake-thinking-text", input=INPUT, tools=TOOLS)
    check("reasoning, message, function_call", [i.type for i in r.output] == ["reasoning", "message", "function_call"],
          r.output)
    own = r.output[0]
    check("the moved reasoning, in the proxy's item",
          isinstance(own, openai.types.responses.ResponseReasoningItem) and own.id.startswith("rs_toolfix")
          and [c.text for c in own.content] == ["The user wants Paris, 3 days."] and own.summary == [], own)
    check("the text without it", r.output_text == "Let me check the weather.\n", repr(r.output_text))
    call = r.output[2]
    check("the call from the text, repaired", json.loads(call.arguments) == {"city": "Paris", "days": 3}, call)
    deltas, final = "", None
    for event in client.responses.create(model="fake-thinking-text", input=INPUT, tools=TOOLS, stream=True):
        if event.type == "response.reasoning_text.delta":
            deltas += event.delta
        elif event.type == "response.completed":
            final = event.response
    check("streamed: reasoning_text deltas", deltas == "The user wants Paris, 3 days.", repr(deltas))
    same = [i.model_dump() for i in final.output] == [i.model_dump() for i in r.output]
    check("streamed: the same output", same, (final.output, r.output))
    # The SDK's stream helper, which checks every item's identity as it accumulates.
    with client.responses.stream(model="fake-thinking-text", input=INPUT, tools=TOOLS) as stream:
        accumulated = stream.get_final_response()
    check("streamed through the SDK's helper: the same output", essence(accumulated.output) == essence(r.output),
          (essence(accumulated.output), essence(r.output)))
    history = INPUT + [i.model_dump(exclude_none=True) for i in r.output] + [
        {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24C"}]
    raw = client.responses.with_raw_response.create(model="fake-thinking-text", input=history, tools=TOOLS)
    r2 = raw.parse()
    check("sent back, the proxy's reasoning item is dropped (the strict upstream answers)",
          "sunny" in r2.output_text and raw.headers.get("x-toolfix", "").endswith("history=1"),
          (r2, raw.headers.get("x-toolfix")))

    # Members of items the proxy writes anew are kept: a message's phase, its part's
    # annotations, a repaired call's caller (issue 21).
    r = client.responses.create(model="fake-cited", input=INPUT, tools=TOOLS)
    check("cited: message, function_call", [i.type for i in r.output] == ["message", "function_call"], r.output)
    message, call = r.output
    check("cited: the phase kept", message.phase == "commentary", message)
    check("cited: the annotation kept", [a.url for a in message.content[0].annotations] == ["https://example.com/paris"],
          message.content[0])
    check("cited: the call repaired, its caller kept",
          (json.loads(call.arguments), call.caller and call.caller.type) == ({"city": "Paris", "days": 3}, "direct"), call)
    final = None
    for event in client.responses.create(model="fake-cited", input=INPUT, tools=TOOLS, stream=True):
        if event.type == "response.completed":
            final = event.response
    same = [i.model_dump() for i in final.output] == [i.model_dump() for i in r.output]
    check("cited, streamed: the same output", same, (final.output, r.output))
    with client.responses.stream(model="fake-cited", input=INPUT, tools=TOOLS) as stream:
        accumulated = stream.get_final_response()
    check("cited, streamed through the SDK's helper: the same output",
          unparsed(accumulated.output) == unparsed(r.output), (accumulated.output, r.output))
    print("all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
