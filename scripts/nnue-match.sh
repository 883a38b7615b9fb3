#!/usr/bin/env bash
# A NNUE net measured the way players care about: Fairy-Stockfish with the net (EvalFile)
# against the same Fairy-Stockfish with its classical evaluation, colour-swapped pairs from
# random openings, at equal time (default 100 ms per move) or equal nodes. Prints one line:
# the result with its pentanomial 95% interval, and which engine played.
#
# Usage:
#   scripts/nnue-match.sh VARIANT NET [--movetime MS | --nodes N] [--games G] [--fsf PATH]
#                         [--ini PATH] [--concurrency C] [--seed S] [--pgn FILE]
#
#   NET             a .nnue file (vzero nnue export, or any net Fairy-Stockfish loads)
#   --movetime MS   time per move of both sides (default 100)
#   --nodes N       nodes per move of both sides instead (equal nodes)
#   --games G       games, in colour-swapped pairs (default 200)
#   --fsf PATH      a Fairy-Stockfish binary (e.g. a native largeboards=yes build); --ini
#                   defaults to the variants.ini beside it, else scripts/fsf/variants.ini.
#                   Default: vzero's `fsf` player, the engine the setup installs from the
#                   package registry (scripts/fairy-stockfish, the pyffish wheel) unless
#                   $VZERO_FSF or a fairy-stockfish on the PATH comes first
#   --concurrency C games at once (default 2: one per core of a 2-core machine)
#
# VZERO names the vzero binary, with vzero-torch beside it (default target/release/vzero, built).
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
variant=$1 net=$2
shift 2
movetime="" nodes="" games=200 fsf="" ini="" concurrency=2 seed=1 pgn=""
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "nnue-match.sh: $1 needs a value" >&2; usage; }
  case $1 in
    --movetime) movetime=$2 ;;
    --nodes) nodes=$2 ;;
    --games) games=$2 ;;
    --fsf) fsf=$2 ;;
    --ini) ini=$2 ;;
    --concurrency) concurrency=$2 ;;
    --seed) seed=$2 ;;
    --pgn) pgn=$2 ;;
    *) echo "nnue-match.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift 2
done
number() { case $2 in ''|*[!0-9]*|0) echo "nnue-match.sh: $1 must be a positive number, not '$2'" >&2; exit 1 ;; esac; }
[ -f "$net" ] || { echo "nnue-match.sh: net '$net' not found" >&2; exit 1; }
net=$(cd "$(dirname "$net")" && pwd)/$(basename "$net")
case $net in *:*) echo "nnue-match.sh: the net's path may not contain ':' (player specs split on it): $net" >&2; exit 1 ;; esac
if [ -n "$movetime" ] && [ -n "$nodes" ]; then echo "nnue-match.sh: give --movetime or --nodes, not both" >&2; exit 1; fi
if [ -z "$nodes" ]; then movetime=${movetime:-100}; number --movetime "$movetime"; limit="movetime=$movetime"; what="$movetime ms per move"
else number --nodes "$nodes"; limit="nodes=$nodes"; what="$nodes nodes per move"; fi
number --games "$games"
number --concurrency "$concurrency"

. scripts/vzero-bin.sh
vzero_bin nnue-match.sh || exit 1
if [ -n "$fsf" ]; then
  . scripts/fsf-spec.sh
  head=$(fsf_spec_head nnue-match.sh "$fsf" "$ini")
else
  head=fsf
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
args=(match "$head:$limit:opt=EvalFile=$net:name=fsf-nnue" "$head:$limit:name=fsf-classical"
  --variant "$variant" --games "$games" --concurrency "$concurrency" --seed "$seed" --no-progress)
if [ -n "$pgn" ]; then args+=(--pgn "$pgn"); fi
if ! "$vzero" "${args[@]}" > "$log" 2>&1; then
  echo "nnue-match.sh: the match failed:" >&2
  tail -5 "$log" >&2
  exit 1
fi
engine=$(sed -n 's/^engine fsf-nnue: //p' "$log" | head -n1)
wdl=$(grep -m1 '^W/D/L' "$log" | sed 's/^W\/D\/L //')
elo=$(grep -m1 '^elo ' "$log" | sed 's/^elo //')
echo "$variant $(basename "$net") vs classical, $what, $games games: W/D/L $wdl, Elo ${elo:-n/a}; engine: ${engine:-$head}"
exit
}
