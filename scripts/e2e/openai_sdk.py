"""End to end with the official OpenAI SDK: a client whose base_url is the toolfix proxy
gets repaired tool calls, streaming and not, from a fake upstream that leaks a Hermes-style
call into `content` (see `toolfix_proxy::fake::demo`).

    python scripts/e2e/openai_sdk.py http://127.0.0.1:8787/v1 [AS_SENT_URL]

AS_SENT_URL, when given, is a second proxy run with `--on-give-up as_sent`. Prints one
line per check and exits non-zero on the first failure.
"""

import json
import sys

import openai

TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather forecast for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris for the next 3 days?"}]


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        sys.exit(1)


def give_up(client, as_sent_url):
    """A call that can never be used (`city` missing): the turn says why, streamed and not;
    with `as_sent`, the call is passed on as the model wrote it."""
    r = client.chat.completions.create(model="fake-refused", messages=MESSAGES, tools=TOOLS)
    choice = r.choices[0]
    check("give up: no call passed on", not choice.message.tool_calls, choice.message.tool_calls)
    check("give up: the text says why", "[toolfix]" in choice.message.content and "/city" in choice.message.content,
          choice.message.content)
    check("give up: finish_reason stop", choice.finish_reason == "stop", choice.finish_reason)
    report = (r.model_extra or {}).get("x_toolfix", {})
    check("give up: reported gave_up", report.get("calls", [{}])[0].get("outcome") == "gave_up", report)
    content, calls = "", 0
    for chunk in client.chat.completions.create(model="fake-refused", messages=MESSAGES, tools=TOOLS, stream=True):
        for c in chunk.choices:
            content += c.delta.content or ""
            calls += len(c.delta.tool_calls or [])
    check("give up streamed: the same text", content == choice.message.content, repr(content))
    check("give up streamed: no call", calls == 0, calls)
    if as_sent_url:
        other = openai.OpenAI(base_url=as_sent_url, api_key="sk-not-checked", max_retries=0)
        r = other.chat.completions.create(model="fake-refused", messages=MESSAGES, tools=TOOLS)
        call = (r.choices[0].message.tool_calls or [None])[0]
        check("as_sent: the call passed on unrepaired",
              call is not None and call.function.arguments == '{"days": 3}', r.choices[0].message)
        streamed = {}
        for chunk in other.chat.completions.create(model="fake-refused", messages=MESSAGES, tools=TOOLS, stream=True):
            for c in chunk.choices:
                for d in c.delta.tool_calls or []:
                    streamed[d.index] = streamed.get(d.index, "") + ((d.function and d.function.arguments) or "")
        check("as_sent streamed: the call passed on unrepaired", streamed == {0: '{"days": 3}'}, streamed)


def main(base_url, as_sent_url=None):
    client = openai.OpenAI(base_url=base_url, api_key="sk-not-checked", max_retries=0)

    # Not streaming.
    r = client.chat.completions.create(model="fake-model", messages=MESSAGES, tools=TOOLS)
    choice = r.choices[0]
    calls = choice.message.tool_calls or []
    check("one tool call", len(calls) == 1, calls)
    call = calls[0]
    check("its name", call.function.name == "get_weather", call.function.name)
    args = json.loads(call.function.arguments)
    check("its arguments repaired (days is an integer)", args == {"city": "Paris", "days": 3}, args)
    check("finish_reason tool_calls", choice.finish_reason == "tool_calls", choice.finish_reason)
    check("the prose left", choice.message.content == "Let me check the weather.\n", choice.message.content)
    report = (r.model_extra or {}).get("x_toolfix", {})
    check("the report says repaired", report.get("calls", [{}])[0].get("outcome") == "repaired", report)

    # Streaming: what the deltas assemble to is what the non-streaming call gave.
    content, finish, streamed = "", None, {}
    for chunk in client.chat.completions.create(model="fake-model", messages=MESSAGES, tools=TOOLS, stream=True):
        for c in chunk.choices:
            content += c.delta.content or ""
            for d in c.delta.tool_calls or []:
                slot = streamed.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] += d.id or ""
                slot["name"] += (d.function and d.function.name) or ""
                slot["arguments"] += (d.function and d.function.arguments) or ""
            finish = c.finish_reason or finish
    check("streamed prose", content == choice.message.content, repr(content))
    check("streamed call", [(s["id"], s["name"], json.loads(s["arguments"])) for s in streamed.values()]
          == [(call.id, "get_weather", args)], streamed)
    check("streamed finish_reason", finish == "tool_calls", finish)

    # The next turn, with the repaired call and its result in the history.
    history = MESSAGES + [choice.message.model_dump(exclude_none=True, exclude={"x_toolfix"}),
                          {"role": "tool", "tool_call_id": call.id, "content": "sunny, 24C"}]
    r2 = client.chat.completions.create(model="fake-model", messages=history, tools=TOOLS)
    check("the next turn answers in prose", "sunny" in (r2.choices[0].message.content or ""), r2)

    # An upstream error keeps its status.
    try:
        client.chat.completions.create(model="fake-overloaded", messages=MESSAGES, tools=TOOLS)
        check("upstream 503 raised", False, "no error")
    except openai.APIStatusError as e:
        check("upstream 503 raised with its status", e.status_code == 503, e.status_code)

    # A malformed upstream event mid-stream: the SDK raises an API error, not a JSON error.
    try:
        for _ in client.chat.completions.create(model="fake-malformed", messages=MESSAGES, tools=TOOLS, stream=True):
            pass
        check("malformed stream raised", False, "no error")
    except openai.APIError as e:
        check("malformed stream raised as an API error", "not valid JSON" in str(e), e)

    give_up(client, as_sent_url)

    # Other routes pass through.
    models = client.models.list()
    check("models listed", [m.id for m in models.data] == ["fake-model"], models)
    print("all checks passed")


if __name__ == "__main__":
    main(*sys.argv[1:3])
