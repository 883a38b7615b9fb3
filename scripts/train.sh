#!/usr/bin/env bash
# Installs what is missing, then runs a short default training run (empire, a few minutes on a
# 2-core machine) and prints where the checkpoints, data, metrics and plots are.
# Usage: scripts/train.sh [minutes=5] [run dir=runs/quickstart] [extra vzero train args...]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-5}
run=${2:-runs/quickstart}
shift $(( $# > 2 ? 2 : $# )) || true
if ! command -v cargo >/dev/null; then
  echo "error: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
# Training needs only the Rust side's LibTorch: skip the test-only installs (Python torch for the
# export check, ~4.7 GB; the S3 test server; pyffish for the rules differential test).
# scripts/test.sh installs them.
VZERO_SKIP_PYTHON=1 VZERO_SKIP_S3=1 VZERO_SKIP_FSF=1 bash scripts/setup.sh
cargo build --release --locked -p vzero
./target/release/vzero train --variant empire --run "$run" --minutes "$minutes" "$@"
