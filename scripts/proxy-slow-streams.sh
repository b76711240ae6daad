#!/usr/bin/env bash
# 1,000 concurrent slow streams through one `toolfix serve` process: a fake upstream that
# sends a token every 50 ms for 30 s (the slow_streams example, in its own process), the
# proxy (release build), and 1,000 streaming clients (the example again). Prints what the
# clients saw (complete and intact, failed, the longest gap between two pieces) and the
# proxy's memory: resident at idle, peak (VmHWM), and resident 5 s after the streams end.
#
#   scripts/proxy-slow-streams.sh                   # 1,000 streams of 30 s
#   STREAMS=200 SECONDS_EACH=10 scripts/proxy-slow-streams.sh
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

STREAMS=${STREAMS:-1000}
SECONDS_EACH=${SECONDS_EACH:-30}
cargo build --quiet --release -p toolfix-cli -p toolfix-proxy --example slow_streams
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
kib() { sed -n "s/^$1: *\([0-9]*\) kB/\1/p" "/proc/$proxy_pid/status"; }
idle=$(kib VmRSS)
"$EXAMPLE" --proxy "http://127.0.0.1:$proxy_port" --streams "$STREAMS" --seconds "$SECONDS_EACH"
peak=$(kib VmHWM)
sleep 5
after=$(kib VmRSS)
echo "proxy memory: idle $((idle / 1024)) MiB, peak $((peak / 1024)) MiB, after $((after / 1024)) MiB"
