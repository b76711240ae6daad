#!/usr/bin/env bash
# 1,000 concurrent slow streams through one `toolfix serve` process: a fake upstream that
# sends a token every 50 ms for 30 s (the slow_streams example, in its own process), the
# proxy (release build), and 1,000 streaming clients (the example again). Prints what the
# clients saw (complete and intact, failed, the longest gap between two pieces) and the
# proxy's memory: resident at idle, peak (VmHWM), resident 5 s after the streams end, and
# whether (and when) it came back to its idle level: within SLACK_MIB (8) MiB of it, watched
# for SETTLE (30) seconds. The binary's allocator (jemalloc, background threads) gives freed
# memory back with a decay of ~10 s.
#
# Idle is the proxy after one stream of the same kind (it starts the clock of nothing): the
# first request faults in the code and builds the tables a serving process keeps for life
# (~5 MiB, mostly the binary's pages: `file` below), which no later load can give back. The
# memory at start is printed too, and each figure's anonymous and file-backed parts.
#
#   scripts/proxy-slow-streams.sh                   # 1,000 streams of 30 s
#   STREAMS=200 SECONDS_EACH=10 scripts/proxy-slow-streams.sh
#   ROUNDS=3 scripts/proxy-slow-streams.sh          # the same load again, memory after each
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

STREAMS=${STREAMS:-1000}
SECONDS_EACH=${SECONDS_EACH:-30}
ROUNDS=${ROUNDS:-1}
SETTLE=${SETTLE:-30}
SLACK_MIB=${SLACK_MIB:-8}
cargo build --quiet --release -p toolfix-cli
cargo build --quiet --release -p toolfix-proxy --example slow_streams
TARGET_DIR=$(target_dir)
EXAMPLE=$TARGET_DIR/release/examples/slow_streams
TOOLFIX=$TARGET_DIR/release/toolfix
ulimit -n 16384 2>/dev/null || true

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
up_port=$(free_port)
proxy_port=$(free_port)
work=$(mktemp -d)
"$EXAMPLE" --upstream-only "127.0.0.1:$up_port" --seconds "$SECONDS_EACH" >"$work/upstream.log" 2>&1 &
up_pid=$!
RUST_LOG=warn "$TOOLFIX" serve --upstream "http://127.0.0.1:$up_port/v1" --listen "127.0.0.1:$proxy_port" \
    >"$work/proxy.log" 2>&1 &
proxy_pid=$!
trap 'kill "$up_pid" "$proxy_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$proxy_port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$proxy_pid/status"; }
parts() { echo "anon $(($(kib RssAnon) / 1024)) + file $(($(kib RssFile) / 1024)) MiB"; }
start=$(kib VmRSS)
start_parts=$(parts)
"$EXAMPLE" --proxy "http://127.0.0.1:$proxy_port" --streams 1 --seconds "$SECONDS_EACH" >/dev/null
sleep 2
idle=$(kib VmRSS)
echo "proxy memory at start $((start / 1024)) MiB ($start_parts); idle, after one stream, $((idle / 1024)) MiB ($(parts))"
for round in $(seq "$ROUNDS"); do
    "$EXAMPLE" --proxy "http://127.0.0.1:$proxy_port" --streams "$STREAMS" --seconds "$SECONDS_EACH"
    peak=$(kib VmHWM)
    # Back to idle: resident within SLACK_MIB of the idle figure, watched for up to
    # SETTLE seconds once the streams have ended.
    back=""
    after5=""
    for t in $(seq "$SETTLE"); do
        sleep 1
        after=$(kib VmRSS)
        [ "$t" -eq 5 ] && after5=$after
        if [ -z "$back" ] && [ "$after" -le $((idle + SLACK_MIB * 1024)) ]; then
            back=$t
            [ "$t" -ge 5 ] && break
        fi
    done
    after5=${after5:-$after}
    if [ -n "$back" ]; then
        verdict="back to idle (within $SLACK_MIB MiB) after $back s"
    else
        verdict="NOT back to idle: $((after / 1024)) MiB $SETTLE s after (idle + $(((after - idle) / 1024)) MiB)"
    fi
    echo "round $round: proxy memory idle $((idle / 1024)) MiB, peak $((peak / 1024)) MiB," \
        "5 s after $((after5 / 1024)) MiB; $verdict ($(parts))"
done
