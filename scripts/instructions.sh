#!/usr/bin/env bash
# Instruction counts for the salvage and pipeline workloads, under valgrind's callgrind
# (repeatable on a shared machine, unlike wall-clock time).
#
#   scripts/instructions.sh                 # every workload
#   scripts/instructions.sh damaged-1mb     # some of them
#   ITERATIONS=5 scripts/instructions.sh    # more iterations per measurement (default 2)
#
# Each workload runs twice under callgrind: with 0 iterations (start-up, input generation,
# schema compilation) and with $ITERATIONS; the difference divided by the iterations and by
# the bytes or calls of one iteration is the figure reported.
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

ITERATIONS=${ITERATIONS:-2}
WORKLOADS=("$@")
if [ ${#WORKLOADS[@]} -eq 0 ]; then
    WORKLOADS=(serde-1mb valid-1mb damaged-1mb small-valid small-calls pipeline-baseline pipeline-valid pipeline-damaged)
fi

command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
cargo build --quiet --release -p toolfix --example workload
TARGET_DIR=$(target_dir)
BIN=$TARGET_DIR/release/examples/workload

# Prints "<instructions> <units> <unit>" for one run.
count() {
    local log
    log=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$log" "$BIN" "$1" "$2" >"$log.out"
    local ir
    ir=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$log")
    read -r _ units unit <"$log.out"
    rm -f "$log" "$log.out"
    echo "$ir $units $unit"
}

printf '%-18s %16s %10s %14s\n' workload instructions units "instr/unit"
for w in "${WORKLOADS[@]}"; do
    read -r base _ _ < <(count "$w" 0)
    read -r total units unit < <(count "$w" "$ITERATIONS")
    per=$(awk -v t="$total" -v b="$base" -v n="$ITERATIONS" -v u="$units" 'BEGIN { printf "%.2f", (t - b) / n / u }')
    printf '%-18s %16d %10s %14s\n' "$w" "$((total - base))" "$units" "$per/${unit%s}"
done
