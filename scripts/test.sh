#!/usr/bin/env bash
# Installs what is missing, then runs every test of the workspace.
# Usage: scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null; then
  echo "error: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
if [ ! -d ../shared/oracle ]; then
  echo "error: ../shared/oracle not found beside the repository (the oracle tests read it)" >&2
  exit 1
fi
if [ -x scripts/setup.sh ]; then
  bash scripts/setup.sh
fi
cargo test --workspace --release --locked "$@"
