#!/usr/bin/env bash
# Instructions the proxy adds per chat completion, under valgrind's callgrind (repeatable
# on a shared machine, unlike wall-clock time), for two answers of the load example
# (4 KB of prose and one server call; the example runs on jemalloc, the allocator
# `toolfix serve` ships with): (a) `untouched` (the call is valid: the proxy
# passes the upstream's bytes on) and (b) `repaired` (`"days": "3"` for an integer).
# Each is sent N times straight to the fake upstream, then N times through the proxy, in
# one process each; the difference divided by N is the figure. Both runs start the same
# things (fake upstream, proxy, client) and send one check request through the proxy, so
# start-up cancels out. The second HTTP hop (hyper server, reqwest client) is in that
# figure; the same request without tools through the proxy (passed through as bytes) is
# that hop alone, and "the proxy's own work" is the difference.
#
# Each API the proxy fixes is measured the same way (the same answer in its shape).
#
#   scripts/proxy-instructions.sh                   # every API, N = 200
#   REQUESTS=500 scripts/proxy-instructions.sh chat # some of them: chat messages responses
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

REQUESTS=${REQUESTS:-200}
APIS=("$@")
if [ ${#APIS[@]} -eq 0 ]; then
    APIS=(chat messages responses)
fi
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
cargo build --quiet --release -p toolfix-proxy --example load
TARGET_DIR=$(target_dir)
BIN=$TARGET_DIR/release/examples/load

count() {
    local log
    log=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$log" \
        "$BIN" --only "$1" --answer "$2" --api "$3" --requests "$REQUESTS" >/dev/null
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$log"
    rm -f "$log"
}

for api in "${APIS[@]}"; do
    for answer in untouched repaired; do
        direct=$(count direct "$answer" "$api")
        hop=$(count passthrough "$answer" "$api")
        proxy=$(count proxy "$answer" "$api")
        echo "$api $answer ($REQUESTS requests): added per request $(((proxy - direct) / REQUESTS))," \
            "of which the second HTTP hop $(((hop - direct) / REQUESTS)) and the proxy's own work $(((proxy - hop) / REQUESTS))"
    done
done
