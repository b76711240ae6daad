#!/usr/bin/env bash
# Instructions the proxy adds per chat completion, under valgrind's callgrind (repeatable
# on a shared machine, unlike wall-clock time): the load benchmark's request (a 4 KB answer
# with one repaired call) sent N times straight to the fake upstream, then N times through
# the proxy, in one process each; the difference divided by N is the figure. Both runs
# start the same things (fake upstream, proxy, client) and send one check request through
# the proxy, so start-up cancels out.
#
#   scripts/proxy-instructions.sh           # N = 200
#   REQUESTS=500 scripts/proxy-instructions.sh
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

REQUESTS=${REQUESTS:-200}
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
cargo build --quiet --release -p toolfix-proxy --example load
TARGET_DIR=$(target_dir)
BIN=$TARGET_DIR/release/examples/load

count() {
    local log
    log=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$log" \
        "$BIN" --only "$1" --requests "$REQUESTS" >/dev/null
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$log"
    rm -f "$log"
}

direct=$(count direct)
proxy=$(count proxy)
echo "direct: $direct instructions for $REQUESTS requests"
echo "proxy:  $proxy instructions for $REQUESTS requests"
echo "added per request: $(( (proxy - direct) / REQUESTS )) instructions"
