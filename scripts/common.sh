# Sourced by the scripts in this directory (not run on its own): makes CARGO_TARGET_DIR,
# when set, absolute (read relative to where the script was started), enters the
# repository root, and defines `target_dir`.
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    mkdir -p "$CARGO_TARGET_DIR"
    CARGO_TARGET_DIR=$(cd "$CARGO_TARGET_DIR" && pwd)
    export CARGO_TARGET_DIR
fi
cd "$(dirname "$0")/.."

# Where cargo puts its builds (CARGO_TARGET_DIR, a cargo config, or target/).
target_dir() {
    cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p'
}
