#!/usr/bin/env bash
# The project's test command (README, .ci/run): every Rust test of the workspace, then the
# suites that need more than cargo (each sets up what it needs from the repository's own
# files: a Python virtual environment from pinned requirements, npm packages).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
# The fuzz targets (fuzz/, its own workspace: cargo-fuzz runs them) must keep compiling
# against the library's API; checked, not run.
cargo check --quiet --manifest-path fuzz/Cargo.toml --bins
# The Python package (crates/toolfix-py): its wheel built and installed into a virtual
# environment under the target dir with the pinned frameworks, then pytest.
bash scripts/python-test.sh
