#!/usr/bin/env bash
# Build (when its sources changed) and install the toolfix Python package into a virtual
# environment under the target dir, with the pinned build and test dependencies of
# crates/toolfix-py/requirements-test.txt (maturin, pytest, the frameworks the hooks plug
# into, json-repair and fast-json-repair). Prints the environment's python on stdout.
#
#   bash scripts/python-package.sh        # -> $CARGO_TARGET_DIR/py-toolfix/bin/python
#
# Idempotent: the environment is made again only when the requirements changed, and the
# wheel (maturin build --release, in its own target dir so it does not disturb the
# workspace's builds) is built and installed again only when a file it is built from
# changed. Needs python3 (3.10 or later, with venv), cargo, and PyPI.
set -euo pipefail
source "$(dirname "$0")/common.sh"
root=$(pwd)
target=$(target_dir)
venv="$target/py-toolfix"
req="$root/crates/toolfix-py/requirements-test.txt"

if ! [[ -x "$venv/bin/python" && -f "$venv/.requirements" ]] || ! cmp -s "$req" "$venv/.requirements"; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
    cp "$req" "$venv/.requirements"
fi

# Everything the wheel is built from.
sources=$(find Cargo.toml Cargo.lock crates/toolfix/Cargo.toml crates/toolfix/src \
    crates/toolfix-py/Cargo.toml crates/toolfix-py/pyproject.toml crates/toolfix-py/src \
    crates/toolfix-py/python -type f -not -name '*.pyc' -not -name '*.so' -print0 | sort -z | xargs -0 sha256sum | sha256sum)
if ! [[ -f "$venv/.wheel" ]] || [[ "$(cat "$venv/.wheel")" != "$sources" ]]; then
    wheels="$target/py-wheels"
    rm -rf "$wheels"
    "$venv/bin/maturin" build --quiet --release --strip --locked -m crates/toolfix-py/Cargo.toml \
        -o "$wheels" --target-dir "$target/py-build" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps \
        --force-reinstall "$wheels"/toolfix-*.whl >&2
    echo "$sources" > "$venv/.wheel"
fi
echo "$venv/bin/python"
