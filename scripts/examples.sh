#!/usr/bin/env bash
# Build toolfix and run it on the bundled examples in examples/.
set -euo pipefail
# CARGO_TARGET_DIR, when set, is read relative to where the script was started.
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    mkdir -p "$CARGO_TARGET_DIR"
    CARGO_TARGET_DIR=$(cd "$CARGO_TARGET_DIR" && pwd)
    export CARGO_TARGET_DIR
fi
cd "$(dirname "$0")/.."
cargo build --release --quiet -p toolfix-cli
# Where cargo puts its builds (CARGO_TARGET_DIR, a cargo config, or target/).
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
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
