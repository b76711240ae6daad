#!/usr/bin/env bash
# Whole-process instruction counts of `toolfix json` on the realistic workloads
# (scripts/bench/gen_inputs.py), under valgrind's callgrind (repeatable on a shared
# machine, unlike wall-clock time). Three measures, each checked for correctness:
#
#   batch        `toolfix json --batch` per damaged call, I/O included: the 10,000 strings of
#                calls_damaged.json as `{"id": i, "input": s}` lines; (all − first line) / 9,999.
#                Every output must equal calls_expected.json (numbers by value).
#   damaged-1mb  `toolfix json --max-input-bytes 4000000 damaged_1mb.json`, per byte; the
#                output must be the value of valid_1mb.json.
#   valid-1mb    the same on valid_1mb.json, per byte; the output must be the file, byte
#                for byte.
#
#   scripts/json-instructions.sh                    # every measure
#   scripts/json-instructions.sh batch valid-1mb    # some of them
#   TOOLFIX_BIN=/path/to/toolfix scripts/json-instructions.sh   # another build, not rebuilt
#
# The workloads are generated into <target dir>/bench-inputs (once). Works from any
# directory and honours CARGO_TARGET_DIR.
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

MEASURES=("$@")
if [ ${#MEASURES[@]} -eq 0 ]; then
    MEASURES=(batch damaged-1mb valid-1mb)
fi
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
TARGET_DIR=$(target_dir)
if [ -n "${TOOLFIX_BIN:-}" ]; then
    BIN=$TOOLFIX_BIN
else
    cargo build --quiet --release -p toolfix-cli
    BIN=$TARGET_DIR/release/toolfix
fi
INPUTS=$TARGET_DIR/bench-inputs
[ -f "$INPUTS/manifest.json" ] || python3 scripts/bench/gen_inputs.py --out "$INPUTS" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints the instructions of one run of "$@" (stdout to $work/out, stderr to $work/err).
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$work/log" "$@" >"$work/out" 2>"$work/err"
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$work/log"
}

for m in "${MEASURES[@]}"; do
    case $m in
    batch)
        python3 - "$INPUTS/calls_damaged.json" "$work/calls.jsonl" "$work/one.jsonl" <<'PY'
import json, sys
calls = json.load(open(sys.argv[1], encoding="utf-8"))
with open(sys.argv[2], "w", encoding="utf-8") as all_, open(sys.argv[3], "w", encoding="utf-8") as one:
    for i, s in enumerate(calls):
        line = json.dumps({"id": i, "input": s}, ensure_ascii=False) + "\n"
        all_.write(line)
        if i == 0:
            one.write(line)
PY
        lines=$(wc -l <"$work/calls.jsonl")
        one=$(count "$BIN" json --batch "$work/one.jsonl")
        all=$(count "$BIN" json --batch "$work/calls.jsonl")
        python3 - "$INPUTS/calls_expected.json" "$work/out" <<'PY'
import json, sys
expected = json.load(open(sys.argv[1], encoding="utf-8"))
def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b) if isinstance(a, float) or isinstance(b, float) else a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b
answers = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
good = sum(1 for a in answers if "output" in a and same(a["output"], expected[a["id"]]))
print(f"batch outputs equal to calls_expected.json: {good}/{len(expected)}")
sys.exit(0 if good == len(expected) and len(answers) == len(expected) else 1)
PY
        awk -v a="$all" -v o="$one" -v n="$lines" \
            'BEGIN { printf "batch: %d calls, %.0f instructions per damaged call (all %d, first line alone %d)\n", n, (a - o) / (n - 1), a, o }'
        ;;
    damaged-1mb | valid-1mb)
        file=$INPUTS/${m/-1mb/_1mb}.json
        ir=$(count "$BIN" json --max-input-bytes 4000000 "$file")
        if [ "$m" = valid-1mb ]; then
            # The answer is the file and a newline.
            if cmp -s <(cat "$file"; [ -n "$(tail -c 1 "$file")" ] && echo) "$work/out"; then
                echo "valid-1mb: output is the input, byte for byte"
            else
                echo "valid-1mb: output differs from the input" >&2
                exit 1
            fi
        else
            python3 - "$INPUTS/valid_1mb.json" "$work/out" <<'PY'
import json, sys
same = json.load(open(sys.argv[1], encoding="utf-8")) == json.load(open(sys.argv[2], encoding="utf-8"))
print("damaged-1mb: output equals the value of valid_1mb.json" if same else "damaged-1mb: WRONG VALUE")
sys.exit(0 if same else 1)
PY
        fi
        size=$(wc -c <"$file")
        awk -v i="$ir" -v s="$size" -v m="$m" 'BEGIN { printf "%s: %d bytes, %.1f instructions per byte (%d in all)\n", m, s, i / s, i }'
        ;;
    *)
        echo "unknown measure: $m (batch, damaged-1mb, valid-1mb)" >&2
        exit 2
        ;;
    esac
done
