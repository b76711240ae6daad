"""End to end with the official Anthropic SDK: a client whose base_url is the toolfix proxy
gets repaired `tool_use` blocks, with `messages.create` and `messages.stream`, from a fake
upstream whose `tool_use.input` is a string holding JSON with `days` as a string (see
`toolfix_proxy::fake::demo`). Then model `fake-thinking`, which writes its reasoning in the
text (`<think>…</think>`) before a Hermes call: the reasoning comes back as a `thinking` block
(signature `toolfix-unsigned`), streamed and not, and sent back in the next turn it is
dropped by the proxy (the fake upstream, like the real API, refuses thinking blocks it did not
sign).

    python scripts/e2e/anthropic_sdk.py http://127.0.0.1:8787

Prints one line per check and exits non-zero on the first failure.
"""

import sys

import anthropic

TOOLS = [{
    "name": "get_weather",
    "description": "Weather forecast for a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris for the next 3 days?"}]


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        sys.exit(1)


def main(base_url):
    # The current SDK authenticates with x-api-key; the proxy forwards both kinds.
    client = anthropic.Anthropic(base_url=base_url, api_key="sk-not-checked", max_retries=0)

    m = client.messages.create(model="fake-model", max_tokens=256, messages=MESSAGES, tools=TOOLS)
    uses = [b for b in m.content if b.type == "tool_use"]
    check("one tool_use block", len(uses) == 1, m.content)
    check("its input repaired (an object, days an integer)", uses[0].input == {"city": "Paris", "days": 3}, uses[0].input)
    check("stop_reason tool_use", m.stop_reason == "tool_use", m.stop_reason)
    texts = [b.text for b in m.content if b.type == "text"]
    check("the text kept", texts == ["Let me check the weather."], texts)
    report = (m.model_extra or {}).get("x_toolfix", {})
    check("the report says repaired", report.get("calls", [{}])[0].get("outcome") == "repaired", report)

    with client.messages.stream(model="fake-model", max_tokens=256, messages=MESSAGES, tools=TOOLS) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    s_uses = [b for b in final.content if b.type == "tool_use"]
    check("streamed text", streamed_text == "Let me check the weather.", repr(streamed_text))
    check("streamed tool_use", [(b.id, b.name, b.input) for b in s_uses] == [(uses[0].id, "get_weather", uses[0].input)],
          final.content)
    check("streamed stop_reason", final.stop_reason == "tool_use", final.stop_reason)

    # The next turn, with the repaired call and its result.
    history = MESSAGES + [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in m.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": "sunny, 24C"}]},
    ]
    m2 = client.messages.create(model="fake-model", max_tokens=256, messages=history, tools=TOOLS)
    check("the next turn answers in prose", "sunny" in m2.content[0].text, m2.content)

    # Reasoning written in the text comes back as a thinking block of the proxy's own.
    m = client.messages.create(model="fake-thinking", max_tokens=256, messages=MESSAGES, tools=TOOLS)
    kinds = [b.type for b in m.content]
    check("thinking, text, tool_use", kinds == ["thinking", "text", "tool_use"], m.content)
    check("the moved reasoning", m.content[0].thinking == "The user wants Paris, 3 days.", m.content[0])
    check("marked as the proxy's", m.content[0].signature == "toolfix-unsigned", m.content[0])
    check("the text without it", m.content[1].text == "Let me check the weather.\n", m.content[1])
    check("the call repaired", m.content[2].input == {"city": "Paris", "days": 3}, m.content[2])
    with client.messages.stream(model="fake-thinking", max_tokens=256, messages=MESSAGES, tools=TOOLS) as stream:
        thinking = "".join(e.thinking for e in stream if e.type == "thinking")
        final = stream.get_final_message()
    check("streamed: thinking events", thinking == "The user wants Paris, 3 days.", repr(thinking))
    check("streamed: the same blocks", [b.model_dump() for b in final.content] == [b.model_dump() for b in m.content],
          (final.content, m.content))
    history = MESSAGES + [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in m.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": m.content[2].id, "content": "sunny, 24C"}]},
    ]
    m2 = client.messages.create(model="fake-thinking", max_tokens=256, messages=history, tools=TOOLS)
    check("sent back, the proxy's thinking block is dropped (the strict upstream answers)",
          "sunny" in m2.content[0].text, m2.content)
    # Members of blocks the proxy writes anew are kept: a text block's citations, a
    # repaired call's caller (issue 21).
    m = client.messages.create(model="fake-cited", max_tokens=256, messages=MESSAGES, tools=TOOLS)
    check("cited: text, tool_use", [b.type for b in m.content] == ["text", "tool_use"], m.content)
    cites = m.content[0].citations or []
    check("cited: the citation kept", [c.cited_text for c in cites] == ["Sunny in Paris all week."], m.content[0])
    check("cited: the call repaired, its caller kept",
          (m.content[1].input, m.content[1].caller and m.content[1].caller.type) == ({"city": "Paris", "days": 3}, "direct"),
          m.content[1])
    with client.messages.stream(model="fake-cited", max_tokens=256, messages=MESSAGES, tools=TOOLS) as stream:
        final = stream.get_final_message()
    check("cited, streamed: the same blocks", [b.model_dump() for b in final.content] == [b.model_dump() for b in m.content],
          (final.content, m.content))
    print("all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
