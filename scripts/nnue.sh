#!/usr/bin/env bash
# A Fairy-Stockfish NNUE net from nothing, with the measured defaults (docs/nnue.md, "Issue 34"):
# installs what is missing (LibTorch, Fairy-Stockfish from the pyffish wheel), then
#   1. `vzero nnue play`: Fairy-Stockfish plays games at depth 2 (its own training-data
#      generator's depth) and every searched position is kept with its score (--play-share
#      of the minutes, 83% by default);
#   2. `vzero nnue train`: one training from scratch on every labelled position of the run, with
#      early stopping and two learning-rate drops (the rest of the minutes at most, reading the
#      positions included);
#   3. `vzero nnue export`: the .nnue file, in DIR/nets/ (nets/ here for an s3:// run);
# and prints the net's path and the command that measures it (scripts/nnue-match.sh).
#
# Usage:
#   scripts/nnue.sh VARIANT [--minutes M] [--run DIR] [--teacher SPEC] [--workers N] [--play-share F]
#                         [--adjudicate-cp N]
#
#   --minutes M     the whole budget (default 60; the field's recipe wants ~10M positions, about
#                   an hour of depth-2 labels on 2 cores)
#   --run DIR       run directory (local or s3://; default runs/nnue-VARIANT); rerunning adds
#                   positions, and the training (in DIR-final-DATE) uses all of them
#   --teacher SPEC  the labelling engine (default fsf:depth=2)
#   --workers N     Fairy-Stockfish processes labelling at once (default: the cores)
#   --play-share F  the share of the minutes spent labelling, the rest reading and training
#                   (default 0.83; a teacher that labels faster wants less, e.g. 0.78 for MultiPV=4)
#   --adjudicate-cp N  a game ends once the teacher's score reaches N centipawns (default 1500;
#                   0: never; larger keeps more of the won endgames)
#
# VZERO names the vzero binary, with vzero-torch beside it (default target/release/vzero, built).
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
variant=$1
shift
minutes=60 run="" teacher="fsf:depth=2" workers=$(nproc 2>/dev/null || echo 2) share=0.83 adjudicate=1500
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "nnue.sh: $1 needs a value" >&2; usage; }
  case $1 in
    --minutes) minutes=$2 ;;
    --run) run=$2 ;;
    --teacher) teacher=$2 ;;
    --workers) workers=$2 ;;
    --play-share) share=$2 ;;
    --adjudicate-cp) adjudicate=$2 ;;
    *) echo "nnue.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift 2
done
run=${run:-runs/nnue-$variant}
case $minutes in ''|*[!0-9.]*) echo "nnue.sh: --minutes must be a number, not '$minutes'" >&2; exit 1 ;; esac
[[ $share =~ ^0\.[0-9]+$ ]] || { echo "nnue.sh: --play-share must be a number between 0 and 1, not '$share'" >&2; exit 1; }
[[ $adjudicate =~ ^[0-9]+$ ]] || { echo "nnue.sh: --adjudicate-cp must be a whole number of centipawns, not '$adjudicate'" >&2; exit 1; }
. scripts/vzero-bin.sh
vzero_bin nnue.sh || exit 1
t0=$(date +%s)
# The split follows the measured rates (docs/nnue.md, empire at depth 2 on 2 cores): ~2,800
# positions/s labelled, ~43,000/s read back and ~15,000/s trained, where the held-out loss stops
# improving after about one epoch of the ~70% of positions that are kept: reading and one epoch
# take ~20% of the labelling time: the default --play-share 0.83. A multi-PV teacher's positions
# take about twice the reading and training per labelling minute (0.78 measured).
play_minutes=$(awk -v m="$minutes" -v f="$share" 'BEGIN { printf "%.2f", m * f }')
echo "== 1/3 vzero nnue play ($play_minutes minutes, teacher $teacher, $workers workers, adjudicated at $adjudicate cp)"
"$vzero" nnue play --variant "$variant" --run "$run" --minutes "$play_minutes" --teacher "$teacher" --workers "$workers" \
  --adjudicate-cp "$adjudicate" --quiet
final="$run-final-$(date -u +%Y%m%d-%H%M%S)"
left=$(awk -v m="$minutes" -v s="$(( $(date +%s) - t0 ))" 'BEGIN { l = m - s / 60; if (l < 0.2) l = 0.2; printf "%.2f", l }')
echo "== 2/3 vzero nnue train from scratch on every labelled position ($final, at most $left minutes)"
"$vzero" nnue train --variant "$variant" --run "$final" --from "$run" --lambda 0.75 --skip-captures \
  --minutes "$left" --steps 100000 --patience 5 --lr-drops 2 --quiet
echo "== 3/3 vzero nnue export"
case $run in s3://*) nets=nets ;; *) nets=$run/nets ;; esac
mkdir -p "$nets"
net=$("$vzero" nnue export --run "$final" --out "$nets/" | sed -n 's/^wrote \([^ ]*\).*/\1/p' | head -n1)
[ -n "$net" ] || { echo "nnue.sh: export printed no file name" >&2; exit 1; }
echo "net: $net ($(( ($(date +%s) - t0 + 30) / 60 )) minutes)"
echo "measure it: scripts/nnue-match.sh $variant $net --movetime 100 --games 200 [--fsf /path/to/native/fairy-stockfish]"
exit
}
