#!/usr/bin/env bash
# Schema repair, in-process, per call, on the realistic workload (scripts/bench):
# `ToolSet::repair_call` on 10,000 calls with type-level damage (half with syntax damage
# too), on the same calls undamaged, and a bare serde_json parse + `jsonschema` `is_valid`
# of the undamaged ones (the baseline). Instructions under valgrind's callgrind for N calls
# and for 1 call; the figure is their difference divided by N - 1, so start-up, reading the
# inputs and building the tool set cancel out. Every call is checked first: the damaged
# ones must repair to the expected values, the valid ones come back byte for byte.
#
#   scripts/schema-instructions.sh            # damaged, valid, baseline
#   N=2000 scripts/schema-instructions.sh damaged
set -euo pipefail
. "$(dirname "$0")/common.sh"

N=${N:-10000}
MODES=("$@")
[ ${#MODES[@]} -eq 0 ] && MODES=(damaged valid baseline)
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
cargo build --quiet --release -p toolfix --example schema_repair
TARGET_DIR=$(target_dir)
BIN=$TARGET_DIR/release/examples/schema_repair
INPUTS=$TARGET_DIR/bench-inputs
[ -f "$INPUTS/manifest.json" ] || python3 scripts/bench/gen_inputs.py --out "$INPUTS" >/dev/null

count() {
    local log
    log=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$log" "$BIN" "$INPUTS" "$1" "$2" >/dev/null
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$log"
    rm -f "$log"
}

printf '%-10s %16s %14s\n' mode instructions "instr/call"
for m in "${MODES[@]}"; do
    [ "$m" = baseline ] || "$BIN" "$INPUTS" "$m" "$N" --check >/dev/null
    one=$(count "$m" 1)
    all=$(count "$m" "$N")
    per=$(awk -v a="$all" -v o="$one" -v n="$N" 'BEGIN { printf "%.0f", (a - o) / (n - 1) }')
    printf '%-10s %16d %14s\n' "$m" "$((all - one))" "$per"
done
