#!/usr/bin/env bash
# Benchmarks: scripts/bench.sh <perft|nn|nnue|mcts|selfplay|fsf|...> [args...]
# Each prints medians and ratios against a reference measured in the same run.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-}
shift || true
case "$what" in
  perft) cargo run -q --release -p vzero --bin vzero-torch -- bench perft "$@" ;;
  # self-play evaluations/s vs the bare network at the same batch (target ratio >= 0.9)
  selfplay) bash scripts/setup.sh >/dev/null && cargo run -q --release -p vzero --bin vzero-torch -- bench selfplay "$@" ;;
  # replay-window bytes per row, planes as f32 vs packed, per variant
  rows) cargo run -q --release -p vzero --bin vzero-torch -- bench rows "$@" ;;
  # resident memory per row of a replay window over N (default 1M) synthetic rows
  window-mem) bash scripts/setup.sh >/dev/null && cargo run -q --release -p vzero-trainer --example windowmem -- "$@" ;;
  # trainer samples/s vs the raw training step
  learn) bash scripts/setup.sh >/dev/null && cargo run -q --release -p vzero-trainer --example learnbench -- "$@" ;;
  # Search simulations/s per variant with a zero-cost evaluator, single thread; args: [runs].
  mcts) cargo run -q --release -p vzero-mcts --example bench -- "$@" ;;
  # network throughput (inference batch 1..512, training step; 1 and 2 threads), see
  # model/examples/nnbench.rs for options (--nets 4x32,6x64 --board 8 --threads 1,2 ...);
  # cells: positions/s (GFLOP/s); --variant empire for the real default net, --compare for the
  # reference / fused f32 / fused bf16 paths side by side
  nn) bash scripts/setup.sh >/dev/null && cargo run -q --release -p vzero-model --example nnbench -- "$@" ;;
  # NNUE on the CPU: training positions/s (sparse Adam, batch 1024, with the factoriser as
  # `vzero nnue train` trains; the example takes other batch sizes, comma-separated, with their
  # ratio to the first, and `off` for no factoriser) and the integer eval's positions/s;
  # args: [variant] (default empire)
  nnue) v=${1:-empire}; cargo run -q --release -p vzero-nnue --example train_speed -- "$v" 1024 10 && cargo run -q --release -p vzero-nnue --example eval_speed -- "$v" ;;
  # Fairy-Stockfish's nodes/s: scripts/fairy-stockfish (pyffish) against other builds, paired by
  # round; args: [--fsf /path/to/native/stockfish ...] [--nodes N] [--rounds R]
  fsf) .venv/bin/python scripts/fsf_speed.py "$@" ;;
  # this checkout's inference vs an older commit's, interleaved: [OLD_REV] [ROUNDS] [--nets ...]
  nn-compare) bash scripts/nn-compare.sh "$@" ;;
  *) echo "usage: scripts/bench.sh <perft|mcts|nn|nnue|fsf|nn-compare|selfplay|learn|rows|window-mem> [args...]" >&2; exit 2 ;;
esac
exit
}
