"""The proxy in front of a real llama-cpp-python server (see scripts/proxy-realserver.sh):
the official OpenAI SDK, straight to the server and through the proxy.

    python scripts/realserver/check.py SERVER_URL PROXY_URL

Checks and prints: a forced call passes byte for byte; streamed text arrives through the
proxy as the server sends it (pieces, time to first text, longest gap, both ways); a
re-prompt (after a storm repeat the proxy stops) is accepted by the server. Exits non-zero
on a failed check.
"""

import json
import sys
import time

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
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
FORCE = {"type": "function", "function": {"name": "get_weather"}}


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail else ""))
    if not ok:
        sys.exit(1)


def stream_text(client, messages):
    started = time.monotonic()
    first, last, gap, pieces, text = None, None, 0.0, 0, ""
    for chunk in client.chat.completions.create(model="smollm2", messages=messages, stream=True, temperature=0,
                                                max_tokens=120, tools=TOOLS, tool_choice="none"):
        for c in chunk.choices:
            t = c.delta.content or ""
            if t:
                now = time.monotonic()
                if first is None:
                    first = now - started
                else:
                    gap = max(gap, now - last)
                last = now
                pieces += 1
                text += t
    return text, pieces, first or 0.0, gap


def main(server, proxy):
    direct = openai.OpenAI(base_url=server, api_key="none", max_retries=0)
    through = openai.OpenAI(base_url=proxy, api_key="none", max_retries=0)

    # A forced call: the server's grammar makes it valid; the proxy passes it byte for byte.
    a = direct.chat.completions.with_raw_response.create(model="smollm2", messages=ASK, tools=TOOLS, tool_choice=FORCE,
                                                         temperature=0, seed=1)
    b = through.chat.completions.with_raw_response.create(model="smollm2", messages=ASK, tools=TOOLS,
                                                          tool_choice=FORCE, temperature=0, seed=1)
    ca = a.parse().choices[0].message.tool_calls[0]
    cb = b.parse().choices[0].message.tool_calls[0]
    check("plain: the forced call's arguments byte for byte", ca.function.arguments == cb.function.arguments,
          f"{ca.function.arguments!r} / {cb.function.arguments!r}")
    check("plain: reported untouched", b.headers.get("x-toolfix", "").startswith("untouched=1"), b.headers.get("x-toolfix"))

    # Streamed text, straight and through the proxy (greedy decoding: the same tokens).
    text_a, pieces_a, first_a, gap_a = stream_text(direct, ASK)
    text_b, pieces_b, first_b, gap_b = stream_text(through, ASK)
    print(f"     streamed text straight: {pieces_a} pieces, first after {first_a * 1000:.0f} ms, longest gap "
          f"{gap_a * 1000:.0f} ms; through the proxy: {pieces_b} pieces, first after {first_b * 1000:.0f} ms, "
          f"longest gap {gap_b * 1000:.0f} ms")
    check("streamed: the same text", text_a == text_b, f"{text_a!r} / {text_b!r}")
    check("streamed: the text arrives in about as many pieces", pieces_b >= pieces_a * 0.9, f"{pieces_a} / {pieces_b}")

    # A storm: the same call twice before, answered; a third is stopped and re-prompted.
    call = {"id": "call_w0", "type": "function", "function": {"name": "get_weather", "arguments": ca.function.arguments}}
    history = list(ASK)
    for i in range(2):
        c = dict(call, id=f"call_w{i}")
        history += [{"role": "assistant", "content": "", "tool_calls": [c]},
                    {"role": "tool", "tool_call_id": f"call_w{i}", "content": "sunny"}]
    r = through.chat.completions.create(model="smollm2", messages=history, tools=TOOLS, tool_choice=FORCE,
                                        temperature=0, seed=1)
    report = (r.model_extra or {}).get("x_toolfix", {})
    attempts = report.get("attempts", [])
    print("     storm report: " + json.dumps({"calls": report.get("calls"), "attempts": attempts})[:600])
    check("the re-prompt was sent", len(attempts) >= 2 and attempts[1].get("kind") == "reprompt", attempts)
    check("the server accepted the re-prompt (no error)", "error" not in attempts[1], attempts[1])
    print("all checks passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
