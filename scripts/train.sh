#!/usr/bin/env bash
# Installs what is missing, then runs a short default training run (empire, a few minutes on a
# 2-core machine) and prints where the checkpoints, data, metrics and plots are.
# Usage: scripts/train.sh [minutes=5] [run dir=runs/quickstart] [extra vzero train args...]
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-5}
run=${2:-runs/quickstart}
shift $(( $# > 2 ? 2 : $# )) || true
# Training needs the Rust side's LibTorch and Fairy-Stockfish (pyffish, a 5.6 MB download: the
# default teacher of empire and shogun, run by scripts/fairy-stockfish); it skips the test-only
# installs (Python torch for the export check, ~4.7 GB; the S3 test server), which
# scripts/test.sh adds. VZERO names a built vzero (with vzero-torch beside it) instead of building.
. scripts/vzero-bin.sh
vzero_bin train.sh || exit 1
"$vzero" train --variant empire --run "$run" --minutes "$minutes" "$@"
exit
}
