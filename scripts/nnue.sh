#!/usr/bin/env bash
# A Fairy-Stockfish NNUE net from nothing, with the measured defaults (docs/nnue.md): installs
# what is missing (LibTorch is not needed; Fairy-Stockfish from the pyffish wheel), then
#   1. `vzero nnue loop`: Fairy-Stockfish plays and labels games, the net trains in rounds
#      (90% of the minutes);
#   2. `vzero nnue train`: one training from scratch on every position the loop labelled, with
#      early stopping (what the ablation found best);
#   3. `vzero nnue export`: the .nnue file, in DIR/nets/;
# and prints the net's path and the command that measures it (scripts/nnue-match.sh).
#
# Usage:
#   scripts/nnue.sh VARIANT [--minutes M] [--run DIR] [--teacher SPEC] [--workers N]
#
#   --minutes M     the whole budget (default 60; the field's recipe wants hours)
#   --run DIR       run directory (local or s3://; default runs/nnue-VARIANT); rerunning goes on
#   --teacher SPEC  the labelling engine (default fsf:nodes=1000; docs/nnue.md has the ablation:
#                   depth-2 labels come 3x faster, ahead but not yet confirmed)
#   --workers N     Fairy-Stockfish processes labelling at once (default: the cores)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
variant=$1
shift
minutes=60 run="" teacher="fsf:nodes=1000" workers=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "nnue.sh: $1 needs a value" >&2; usage; }
  case $1 in
    --minutes) minutes=$2 ;;
    --run) run=$2 ;;
    --teacher) teacher=$2 ;;
    --workers) workers=$2 ;;
    *) echo "nnue.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift 2
done
run=${run:-runs/nnue-$variant}
case $minutes in ''|*[!0-9.]*) echo "nnue.sh: --minutes must be a number, not '$minutes'" >&2; exit 1 ;; esac
if ! command -v cargo >/dev/null; then
  echo "error: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
VZERO_SKIP_PYTHON=1 VZERO_SKIP_S3=1 bash scripts/setup.sh
cargo build --release --locked -p vzero --bin vzero
vzero=target/release/vzero
loop_minutes=$(awk -v m="$minutes" 'BEGIN { printf "%.2f", m * 0.9 }')
echo "== 1/3 vzero nnue loop ($loop_minutes minutes, teacher $teacher, $workers workers)"
"$vzero" nnue loop --variant "$variant" --run "$run" --minutes "$loop_minutes" --teacher "$teacher" --workers "$workers"
final="$run-final"
echo "== 2/3 vzero nnue train from scratch on every labelled position ($final)"
"$vzero" nnue train --variant "$variant" --run "$final" --from "$run" --lambda 0.75 --skip-captures --steps 4000
echo "== 3/3 vzero nnue export"
mkdir -p "$run/nets"
net=$("$vzero" nnue export --run "$final" --out "$run/nets/" | sed -n 's/^wrote \([^ ]*\).*/\1/p' | head -n1)
[ -n "$net" ] || { echo "nnue.sh: export printed no file name" >&2; exit 1; }
echo "net: $net"
echo "measure it: scripts/nnue-match.sh $variant $net --movetime 100 --games 200"
