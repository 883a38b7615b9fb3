#!/usr/bin/env bash
# Benchmarks: scripts/bench.sh <perft|nn|mcts|selfplay> [args...]
# Each prints medians and ratios against a reference measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-}
shift || true
case "$what" in
  perft) cargo run -q --release -p vzero -- bench perft "$@" ;;
  # Search simulations/s per variant with a zero-cost evaluator, single thread; args: [runs].
  mcts) cargo run -q --release -p vzero-mcts --example bench -- "$@" ;;
  *) echo "usage: scripts/bench.sh <perft|mcts> [args...]" >&2; exit 2 ;;
esac
