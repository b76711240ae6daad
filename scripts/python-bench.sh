#!/usr/bin/env bash
# The Python package's benchmark on the 10,000 damaged calls of scripts/bench:
#
#   bash scripts/python-bench.sh                 # wall clock (crates/toolfix-py/bench/bench.py):
#                                                # loads vs json_repair vs fast_json_repair with
#                                                # correctness; repair_call vs the Rust loop
#   bash scripts/python-bench.sh --instructions  # the same comparisons in instructions per call
#                                                # (valgrind callgrind: repeatable on a shared
#                                                # machine; a few minutes)
#
# Instruction counts run crates/toolfix-py/bench/count.py over N calls and over 1 call;
# (all - one) / (N - 1) is the cost per call, interpreter start-up and imports cancelled.
set -euo pipefail
python=$(bash "$(dirname "$0")/python-package.sh")
source "$(dirname "$0")/common.sh"
inputs="$(target_dir)/bench-inputs"
[[ -f "$inputs/calls_damaged.json" ]] || python3 scripts/bench/gen_inputs.py --out "$inputs" >/dev/null
if [[ "${1:-}" != "--instructions" ]]; then
    exec "$python" crates/toolfix-py/bench/bench.py "$inputs" "$@"
fi
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$python" crates/toolfix-py/bench/count.py \
        "$1" "$inputs/calls_damaged.json" "$2" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_call() { # WHICH N
    local one all
    one=$(count "$1" 1)
    all=$(count "$1" "$2")
    echo $(( (all - one) / ($2 - 1) ))
}
echo "instructions per call (valgrind callgrind)"
printf '  %-44s %9s\n' "toolfix.loads (damaged calls)" "$(per_call toolfix 2001)"
printf '  %-44s %9s\n' "fast_json_repair.loads (damaged calls)" "$(per_call fast_json_repair 2001)"
printf '  %-44s %9s\n' "json_repair.loads (damaged calls)" "$(per_call json_repair 201)"
printf '  %-44s %9s\n' "toolfix salvage in Rust alone" "$(per_call salvage 2001)"
printf '  %-44s %9s\n' "toolfix.repair_json (damaged calls)" "$(per_call repair_json 2001)"
printf '  %-44s %9s\n' "toolfix.loads (valid calls)" "$(per_call toolfix_valid 2001)"
printf '  %-44s %9s\n' "json.loads (valid calls)" "$(per_call json 2001)"
printf '  %-44s %9s\n' "repair_call in Rust alone (schema damage)" "$(per_call repair_rust 1001)"
printf '  %-44s %9s\n' "ToolSet.repair_call from Python" "$(per_call repair_call 1001)"
printf '  %-44s %9s\n' "ToolSet.repair_call(...).arguments" "$(per_call repair_call_arguments 1001)"
printf '  %-44s %9s\n' "repair_call in Rust alone (valid calls)" "$(per_call valid_rust 2001)"
printf '  %-44s %9s\n' "ToolSet.repair_call from Python (valid)" "$(per_call valid_call 2001)"
