#!/usr/bin/env bash
# Run the cargo-fuzz targets for N seconds each (default 300), without a sanitizer (only the
# stable toolchain is here; set SANITIZER=address to use ASan through RUSTC_BOOTSTRAP=1).
#
#   scripts/fuzz.sh              # every target, 300 s each
#   scripts/fuzz.sh 60 salvage   # one target, 60 s
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

SECONDS_EACH=${1:-300}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=(salvage repair extract proxy mcp head)
fi

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz

# Seed the salvage corpus with the JSON corpus inputs.
mkdir -p fuzz/corpus/salvage
python3 - <<'PY' || true
import glob, hashlib, json
for f in glob.glob("crates/toolfix/tests/fixtures/json/*.jsonl"):
    for line in open(f, encoding="utf-8"):
        try:
            s = json.loads(line).get("input")
        except (ValueError, AttributeError):
            continue
        if isinstance(s, str) and s:
            with open("fuzz/corpus/salvage/seed-" + hashlib.sha1(s.encode()).hexdigest(), "w", encoding="utf-8") as out:
                out.write(s)
PY

# Seed the proxy corpus: answers, streams and requests of each API (the first byte picks
# what is read and the API, the second the stream's piece size; see fuzz_targets/proxy.rs).
mkdir -p fuzz/corpus/proxy
python3 - <<'PY' || true
import hashlib, json
broken = '{"city": "Paris", "days": "3",}'
text = 'Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
chat = {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": text, "reasoning_content": "<think>hm</think>",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": broken}}]}}]}
messages = {"id": "msg", "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}, {"type": "text", "text": text},
                        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": broken}]}
responses = {"id": "resp", "object": "response", "status": "completed",
             "output": [{"type": "message", "id": "m1", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
                        {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "get_weather", "arguments": broken}]}
def chunk(delta, finish=None):
    return "data: " + json.dumps({"id": "x", "object": "chat.completion.chunk",
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
chat_sse = chunk({"role": "assistant", "content": ""}) + "".join(chunk({"content": text[i:i + 5]}) for i in range(0, len(text), 5))
chat_sse += chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": broken}}]})
chat_sse += chunk({}, "tool_calls") + "data: [DONE]\n\n"
def named(name, data):
    return "event: " + name + "\ndata: " + json.dumps(data) + "\n\n"
messages_sse = (named("message_start", {"type": "message_start", "message": {"id": "msg", "type": "message", "content": []}})
    + named("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    + named("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
    + named("content_block_stop", {"type": "content_block_stop", "index": 0})
    + named("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {}}})
    + named("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": broken}})
    + named("content_block_stop", {"type": "content_block_stop", "index": 1})
    + named("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}})
    + named("message_stop", {"type": "message_stop"}))
responses_sse = (named("response.created", {"type": "response.created", "sequence_number": 0, "response": {"id": "resp", "output": [], "status": "in_progress"}})
    + named("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "get_weather", "arguments": ""}})
    + named("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "sequence_number": 2, "output_index": 0, "item_id": "fc1", "delta": broken})
    + named("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
            "item": {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "get_weather", "arguments": broken}})
    + named("response.completed", {"type": "response.completed", "sequence_number": 4, "response": responses}))
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
requests = [
    {"model": "m", "tools": tools, "messages": [{"role": "user", "content": "hi"}, chat["choices"][0]["message"],
                                                 {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]},
    {"model": "m", "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
     "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": messages["content"]}]},
    {"model": "m", "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
     "input": [{"role": "user", "content": "hi"}] + responses["output"]},
]
seeds = [(0, json.dumps(chat)), (1, json.dumps(messages, indent=1)), (2, json.dumps(responses)),
         (3, chat_sse), (4, messages_sse), (5, responses_sse)] + [(6 + i, json.dumps(r)) for i, r in enumerate(requests)]
for mode, body in seeds:
    data = bytes([mode, 6]) + body.encode()
    with open("fuzz/corpus/proxy/seed-" + hashlib.sha1(data).hexdigest(), "wb") as out:
        out.write(data)
PY

# Seed the MCP corpus: a session's lines (first byte: 0 from the client, 1 from the server).
mkdir -p fuzz/corpus/mcp
printf '%s\n' \
    $'\x00{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"rust","limit":"5"}}}' \
    $'\x00{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_file","arguments":"{\\"path\\": \\"a\\"}"}}' \
    $'\x01{"jsonrpc":"2.0","id":3,"result":{"content":[]}}' \
    $'\x01{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}' \
    $'\x00[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"a"}}}]' \
    > fuzz/corpus/mcp/seed-session

# Seed the head corpus: a request and an answer head of the common shape, and odd ones
# (the first byte is the room for header lines; see fuzz_targets/head.rs).
mkdir -p fuzz/corpus/head
printf '\x05POST /v1/chat/completions HTTP/1.1\r\ncontent-type: application/json\r\naccept: */*\r\nhost: 127.0.0.1:8080\r\ncontent-length: 92\r\n\r\n{}' > fuzz/corpus/head/seed-request
printf '\x05HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4045\r\ndate: Sat, 28 Nov 2026 01:39:27 GMT\r\n\r\n{}' > fuzz/corpus/head/seed-answer
printf '\x02HTTP/1.1 404 Not\tFound\r\nx-a:\t b\tc \r\nX_Odd~Name: \xff\r\nempty:\r\n\r\n' > fuzz/corpus/head/seed-odd
printf '\x03POST /a?b=%%20 HTTP/1.1\r\nA: b\r\n c\r\nd : e\r\n\n' > fuzz/corpus/head/seed-fold

SANITIZER=${SANITIZER:-none}
status=0
for t in "${TARGETS[@]}"; do
    echo "== fuzz $t for ${SECONDS_EACH}s (sanitizer: $SANITIZER)"
    if [ "$SANITIZER" = none ]; then
        (cd fuzz && cargo fuzz run "$t" --sanitizer none -- -max_total_time="$SECONDS_EACH" -timeout=10) || status=1
    else
        (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" --sanitizer "$SANITIZER" -- -max_total_time="$SECONDS_EACH" -timeout=10) || status=1
    fi
done
exit $status
