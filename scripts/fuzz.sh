#!/usr/bin/env bash
# Run the cargo-fuzz targets for N seconds each (default 300), without a sanitizer (only the
# stable toolchain is here; set SANITIZER=address to use ASan through RUSTC_BOOTSTRAP=1).
#
#   scripts/fuzz.sh              # every target, 300 s each
#   scripts/fuzz.sh 60 salvage   # one target, 60 s
set -euo pipefail
# CARGO_TARGET_DIR is read relative to where the script was started.
. "$(dirname "$0")/common.sh"

SECONDS_EACH=${1:-300}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=(salvage repair extract)
fi

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz

# Seed the salvage corpus with the JSON corpus inputs.
mkdir -p fuzz/corpus/salvage
python3 - <<'PY' || true
import glob, hashlib, json
for f in glob.glob("crates/toolfix/tests/fixtures/json/*.jsonl"):
    for line in open(f, encoding="utf-8"):
        try:
            s = json.loads(line).get("input")
        except (ValueError, AttributeError):
            continue
        if isinstance(s, str) and s:
            with open("fuzz/corpus/salvage/seed-" + hashlib.sha1(s.encode()).hexdigest(), "w", encoding="utf-8") as out:
                out.write(s)
PY

SANITIZER=${SANITIZER:-none}
status=0
for t in "${TARGETS[@]}"; do
    echo "== fuzz $t for ${SECONDS_EACH}s (sanitizer: $SANITIZER)"
    if [ "$SANITIZER" = none ]; then
        (cd fuzz && cargo fuzz run "$t" --sanitizer none -- -max_total_time="$SECONDS_EACH" -timeout=10) || status=1
    else
        (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" --sanitizer "$SANITIZER" -- -max_total_time="$SECONDS_EACH" -timeout=10) || status=1
    fi
done
exit $status
