#!/usr/bin/env bash
# Whole-process instruction count of `toolfix json --batch` per damaged call, I/O included,
# under valgrind's callgrind (repeatable on a shared machine, unlike wall-clock time).
#
#   scripts/batch-instructions.sh            # 1,000 rounds of the 7 damaged examples
#   ROUNDS=200 scripts/batch-instructions.sh
#   TOOLFIX_BIN=/path/to/toolfix scripts/batch-instructions.sh   # another build, not rebuilt
#
# The batch file repeats the damaged lines of examples/json.jsonl (every line but the valid
# one and the prose one), each with its own id. The process runs twice under callgrind: on
# an empty file (start-up) and on the batch file; the difference divided by the number of
# lines is the figure reported. Works from any directory and honours CARGO_TARGET_DIR.
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

ROUNDS=${ROUNDS:-1000}
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
if [ -n "${TOOLFIX_BIN:-}" ]; then
    BIN=$TOOLFIX_BIN
else
    cargo build --quiet --release -p toolfix-cli
    TARGET_DIR=$(target_dir)
    BIN=$TARGET_DIR/release/toolfix
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -v -e '"valid-untouched"' -e '"not-json"' examples/json.jsonl >"$work/damaged.jsonl"
lines_per_round=$(wc -l <"$work/damaged.jsonl")
for ((r = 0; r < ROUNDS; r++)); do
    sed "s/^{\"id\": \"\\([^\"]*\\)\"/{\"id\": \"\\1-$r\"/" "$work/damaged.jsonl"
done >"$work/batch.jsonl"
: >"$work/empty.jsonl"

count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$work/log" \
        "$BIN" json --batch "$1" >"$work/out.jsonl"
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$work/log"
}

base=$(count "$work/empty.jsonl")
total=$(count "$work/batch.jsonl")
lines=$((ROUNDS * lines_per_round))
per=$(awk -v t="$total" -v b="$base" -v n="$lines" 'BEGIN { printf "%.0f", (t - b) / n }')
printf 'toolfix json --batch: %d lines, start-up %d instructions, %s instructions per line\n' \
    "$lines" "$base" "$per"
