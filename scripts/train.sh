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
bash scripts/setup.sh
cargo build --release --locked -p vzero
./target/release/vzero train --variant empire --run "$run" --minutes "$minutes" "$@"
