#!/usr/bin/env bash
# The real agent clients through `toolfix serve`, offline (opt-in, not in the test command:
# the clients are ~800 MB from npm). Claude Code (@anthropic-ai/claude-code, over
# /v1/messages) and Codex (@openai/codex, over /v1/responses), at the versions pinned in
# scripts/agents/package.json, installed once under the target dir; a fake upstream (the
# fake_upstream example's `agents` script) whose first reply is a broken call to the
# client's own tool that reads a file — Qwen-style XML in the text calling Claude Code's
# `Read`, Codex's shell tool with a trailing comma in its arguments. Each client must run
# the tool and finish the turn with the file's secret word; the proxy's metrics must show
# the repaired call.
#
#   bash scripts/proxy-agents.sh            # both clients
#   bash scripts/proxy-agents.sh claude     # one of them: claude | codex
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

WHICH=${1:-all}
cargo build --quiet -p toolfix-cli -p toolfix-proxy --example fake_upstream
TARGET_DIR=$(target_dir)
TOOLFIX=$TARGET_DIR/debug/toolfix
FAKE=$TARGET_DIR/debug/examples/fake_upstream

agents="$TARGET_DIR/npm-agents"
mkdir -p "$agents"
if ! cmp -s scripts/agents/package.json "$agents/package.json" || [ ! -x "$agents/node_modules/.bin/codex" ]; then
    cp scripts/agents/package.json "$agents/package.json"
    (cd "$agents" && npm install --no-audit --no-fund --no-package-lock >&2)
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
up_port=$(free_port)
proxy_port=$(free_port)
work=$(mktemp -d)
"$FAKE" "127.0.0.1:$up_port" agents >"$work/upstream.log" 2>&1 &
up_pid=$!
"$TOOLFIX" serve --upstream "http://127.0.0.1:$up_port/v1" --listen "127.0.0.1:$proxy_port" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
trap 'kill "$up_pid" "$proxy_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$proxy_port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
mkdir -p "$work/project" "$work/home"
echo "toolfix-secret-42" >"$work/project/note.txt"
status=0

if [ "$WHICH" = all ] || [ "$WHICH" = claude ]; then
    echo "== Claude Code $(cd "$agents" && node_modules/.bin/claude --version)"
    out=$(cd "$work/project" && HOME="$work/home" ANTHROPIC_BASE_URL="http://127.0.0.1:$proxy_port" \
        ANTHROPIC_API_KEY=dummy DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        DISABLE_AUTOUPDATER=1 timeout 120 "$agents/node_modules/.bin/claude" -p \
        "Read the file at FILE=$work/project/note.txt and tell me its secret word." \
        --output-format json --model fake-model --allowedTools Read </dev/null 2>&1) || true
    echo "$out" | tail -c 2000
    if echo "$out" | grep -q "The file says:.*toolfix-secret-42"; then
        echo "ok   Claude Code ran Read (repaired from Qwen XML in text) and finished the turn"
    else
        echo "FAIL Claude Code"
        status=1
    fi
fi

if [ "$WHICH" = all ] || [ "$WHICH" = codex ]; then
    echo "== $(cd "$agents" && node_modules/.bin/codex --version)"
    mkdir -p "$work/codex"
    cat >"$work/codex/config.toml" <<TOML
model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$proxy_port/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
TOML
    out=$(cd "$work/project" && HOME="$work/home" CODEX_HOME="$work/codex" FAKE_API_KEY=dummy timeout 180 \
        "$agents/node_modules/.bin/codex" exec --skip-git-repo-check \
        "Read the file at FILE=$work/project/note.txt and tell me its secret word." </dev/null 2>&1) || true
    echo "$out" | tail -c 2000
    if echo "$out" | tr '\n' ' ' | grep -q "The file says:.*toolfix-secret-42"; then
        echo "ok   Codex ran its shell tool (arguments repaired) and finished the turn"
    else
        echo "FAIL Codex"
        status=1
    fi
fi

echo "== the proxy's metrics"
curl -s "http://127.0.0.1:$proxy_port/metrics" | grep -E '^toolfix_(tool_calls|repairs)_total' || true
exit $status
