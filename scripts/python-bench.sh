#!/usr/bin/env bash
# The Python package's benchmark (crates/toolfix-py/bench/bench.py): toolfix.loads against
# json_repair and fast_json_repair on the 10,000 damaged calls of scripts/bench, with
# correctness, and ToolSet.repair_call's overhead over the Rust call. Wall-clock figures:
# run on a quiet machine. Arguments go to bench.py (e.g. --repeat 9).
set -euo pipefail
python=$(bash "$(dirname "$0")/python-package.sh")
source "$(dirname "$0")/common.sh"
inputs="$(target_dir)/bench-inputs"
[[ -f "$inputs/calls_damaged.json" ]] || python3 scripts/bench/gen_inputs.py --out "$inputs" >/dev/null
exec "$python" crates/toolfix-py/bench/bench.py "$inputs" "$@"
