# Sourced by the scripts that run vzero's commands (ladder.sh, nnue.sh, nnue-match.sh, train.sh):
# one way to find the binary.
#
# vzero_bin SCRIPT first installs what is missing (scripts/setup.sh without the Python export
# venv, the S3 server and the deployment checks: LibTorch, and Fairy-Stockfish from the pyffish wheel, the default
# `fsf` player), then sets $vzero: $VZERO when set, else target/release/vzero, built with its
# sibling by `cargo build --release -p vzero` (both binaries: `vzero` is the launcher and hands
# every command but the rules ones to `vzero-torch` beside it). It fails, naming SCRIPT, when
# the binary is not there or has no vzero-torch beside it, before any work starts.
vzero_bin() {
  local script=$1 path
  VZERO_SKIP_PYTHON=1 VZERO_SKIP_S3=1 VZERO_SKIP_DEPLOY=1 bash scripts/setup.sh >&2 || { echo "$script: scripts/setup.sh failed" >&2; return 1; }
  if [ -n "${VZERO:-}" ]; then
    vzero=$VZERO
  else
    vzero=target/release/vzero
    command -v cargo >/dev/null || { echo "$script: cargo not found; install Rust (https://rustup.rs) first, or set VZERO to a built vzero" >&2; return 1; }
    cargo build --release --locked -p vzero >&2 || { echo "$script: building vzero failed" >&2; return 1; }
  fi
  path=$(command -v "$vzero") || { echo "$script: vzero binary '$vzero' not found or not executable" >&2; return 1; }
  [ -x "$(dirname "$path")/vzero-torch" ] || {
    echo "$script: '$path' has no vzero-torch beside it (it runs every command but the rules ones): build both with \`cargo build --release -p vzero\`, or copy target/release/vzero-torch next to it" >&2
    return 1
  }
}
