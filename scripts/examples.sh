#!/usr/bin/env bash
# Build toolfix and run it on the bundled examples in examples/.
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"
cargo build --release --quiet -p toolfix-cli
TARGET_DIR=$(target_dir)
bin=$TARGET_DIR/release/toolfix
run() {
    echo "\$ toolfix $*"
    "$bin" "$@"
    echo
}
run json --batch examples/json.jsonl
run repair --batch --tools examples/tools.json examples/repair.jsonl
if "$bin" help extract >/dev/null 2>&1 && [ -f examples/extract.jsonl ]; then
    run extract --batch --tools examples/tools.json examples/extract.jsonl
    run fix --batch --tools examples/tools.json examples/extract.jsonl
fi
run check --tools examples/tools.json
