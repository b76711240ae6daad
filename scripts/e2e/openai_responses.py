"""End to end with the official OpenAI SDK's Responses API: a client whose base_url is the
toolfix proxy gets a repaired `function_call` from a fake upstream whose `arguments` have a
trailing comma and `days` as a string (see `toolfix_proxy::fake::demo`), with
`responses.create`, streamed and not. Then model `fake-thinking`, which leaves its call in a
`reasoning` item's text (as gpt-oss does): the call comes back as a `function_call` after
the reasoning item, which is untouched.

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
    print("all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
