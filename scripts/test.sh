#!/usr/bin/env bash
# Full test suite on a fresh machine or checkout: installs what is missing (LibTorch + cmake
# into .venv via scripts/setup.sh, idempotent), then builds and runs every workspace test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --release "$@"
