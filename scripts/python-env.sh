#!/usr/bin/env bash
# Create (once) the Python virtual environment the proxy's end-to-end test uses: the
# official `openai` and `anthropic` packages, pinned in scripts/e2e/requirements.txt, installed from PyPI.
# Idempotent: an environment that already matches the requirements is left as it is.
# Prints the environment's python on stdout.
#
#   bash scripts/python-env.sh            # -> $CARGO_TARGET_DIR/py-e2e/bin/python
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/py-e2e"
req="$root/scripts/e2e/requirements.txt"
stamp="$venv/.requirements"
if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$req" "$stamp"; then
    echo "$venv/bin/python"
    exit 0
fi
mkdir -p "$target"
python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
cp "$req" "$stamp"
echo "$venv/bin/python"
