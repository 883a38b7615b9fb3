#!/usr/bin/env bash
# Benchmarks: scripts/bench.sh <perft|nn|mcts|selfplay> [args...]
# Each prints medians and ratios against a reference measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-}
shift || true
case "$what" in
  perft) cargo run -q --release -p vzero -- bench perft "$@" ;;
  # self-play evaluations/s vs the bare network at the same batch (target ratio >= 0.9)
  selfplay) bash scripts/setup.sh >/dev/null && cargo run -q --release -p vzero -- bench selfplay "$@" ;;
  # trainer samples/s vs the raw training step
  learn) bash scripts/setup.sh >/dev/null && cargo run -q --release -p vzero-trainer --example learnbench -- "$@" ;;
  # Search simulations/s per variant with a zero-cost evaluator, single thread; args: [runs].
  mcts) cargo run -q --release -p vzero-mcts --example bench -- "$@" ;;
  # network throughput (inference batch 1..512, training step; 1 and 2 threads), see
  # model/examples/nnbench.rs for options (--nets 4x32,6x64 --board 8 --threads 1,2 ...)
  nn) bash scripts/setup.sh >/dev/null && cargo run -q --release -p vzero-model --example nnbench -- "$@" ;;
  *) echo "usage: scripts/bench.sh <perft|mcts|nn|selfplay|learn> [args...]" >&2; exit 2 ;;
esac
