#!/usr/bin/env bash
# A checkpoint's strength ladder: the checkpoint (net:CKPT at --sims simulations per move) against
# random, greedy, alphabeta:2, alphabeta:3 and its run's generation 0 (the same search on the
# untrained network: what the training itself added), and Fairy-Stockfish at 1, 10, 100 and 1,000
# nodes per move (and, with --movetime MS, vzero's UCI engine on the checkpoint against
# Fairy-Stockfish both at MS per move: the equal-time row). Every row is
# `vzero match` (colour-swapped pairs from random openings, pentanomial Elo with its 95% interval
# when the games come in pairs); one table at the end. A measurement script, not a test.
#
# Usage:
#   scripts/ladder.sh VARIANT CKPT [--fsf PATH] [--ini PATH] [--games N] [--sims N]
#                     [--nodes "1 10 100 1000"] [--movetime MS] [--concurrency N] [--seed S]
#                     [--gen0 CKPT|none] [--out DIR]
#
#   --fsf PATH      a Fairy-Stockfish binary (built with largeboards=yes for empire and shogun);
#                   --ini defaults to the variants.ini beside it, else scripts/fsf/variants.ini.
#                   Default: vzero's `fsf` player (Fairy-Stockfish as $VZERO_FSF, else
#                   fairy-stockfish on the PATH, else scripts/fairy-stockfish from the pyffish
#                   wheel, with vzero's definitions); --fsf none leaves the Fairy-Stockfish rows out
#   --games N       games per row (default 100)
#   --sims N        the checkpoint's simulations per move (default 64)
#   --gen0 CKPT     the generation-0 row's checkpoint (default: gen-000000-*.json beside CKPT when
#                   there is one; none skips the row)
#   --out DIR       keeps every row's PGN and the table (default: a temporary directory)
#
# VZERO names the vzero binary, with vzero-torch beside it (default target/release/vzero, built).
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
variant=$1 ckpt=$2
shift 2
fsf="" ini="" gen0="" games=100 sims=64 nodes="1 10 100 1000" movetime="" concurrency=2 seed=1 out=""
while [ $# -gt 0 ]; do
  case $1 in
    --fsf) fsf=$2; shift 2 ;;
    --ini) ini=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --sims) sims=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --movetime) movetime=$2; shift 2 ;;
    --concurrency) concurrency=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --gen0) gen0=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "ladder.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -e "$ckpt" ] || { echo "ladder.sh: checkpoint '$ckpt' not found" >&2; exit 1; }
case $games in ''|*[!0-9]*|0) echo "ladder.sh: --games must be a positive number, not '$games'" >&2; exit 1 ;; esac
. scripts/vzero-bin.sh
vzero_bin ladder.sh || exit 1
# Fairy-Stockfish: the spec head of its rows (uci:PATH:variantpath=INI, or vzero's fsf player)
fsf_spec="" fsf_note=""
if [ "$fsf" = none ]; then
  fsf=""
elif [ -z "$fsf" ]; then
  fsf_spec=fsf
  # which engine that is (one line, also when it cannot start: then its rows fail)
  fsf_note=$("$vzero" match fsf:nodes=1 random --variant "$variant" --games 1 --no-progress 2>&1 >/dev/null | sed -n 's/^engine //p; s/^error: //p' | head -n1)
  echo "ladder.sh: Fairy-Stockfish: $fsf_note" >&2
fi
if [ -n "$fsf" ]; then
  . scripts/fsf-spec.sh
  fsf_spec=$(fsf_spec_head ladder.sh "$fsf" "$ini")
  fsf_note="$fsf with ${fsf_spec##*:variantpath=}"
fi
if [ -z "$gen0" ]; then
  gen0=$(ls "$(dirname "$ckpt")"/gen-000000-*.json 2>/dev/null | head -1 || true)
  [ "$gen0" != "$ckpt" ] || gen0=""
elif [ "$gen0" = none ]; then
  gen0=""
else
  [ -e "$gen0" ] || { echo "ladder.sh: generation-0 checkpoint '$gen0' not found" >&2; exit 1; }
fi
if [ -z "$out" ]; then out=$(mktemp -d); fi
mkdir -p "$out"
table="$out/ladder.md"
me="net:$ckpt:$sims"

rows=()
opponents=(random greedy alphabeta:2 alphabeta:3)
if [ -n "$gen0" ]; then opponents+=("net:$gen0:$sims"); fi
if [ -n "$fsf_spec" ]; then
  for n in $nodes; do opponents+=("$fsf_spec:nodes=$n:name=fsf-${n}n"); done
fi

# One row: plays `vzero match A B` and keeps its summary lines.
play_row() {
  local label=$1 a=$2 b=$3 slug=$4
  echo "== $label ($games games)" >&2
  local log="$out/$slug.txt"
  if ! "$vzero" match "$a" "$b" --variant "$variant" --games "$games" --concurrency "$concurrency" \
      --seed "$seed" --pgn "$out/$slug.pgn" --no-progress > "$log" 2>&1; then
    echo "ladder.sh: the match against $label failed:" >&2
    tail -5 "$log" >&2
    rows+=("| $label | failed (see $log) | | |")
    return
  fi
  local wdl elo
  wdl=$(grep -m1 '^W/D/L' "$log" | sed 's/^W\/D\/L //')
  elo=$(grep -m1 '^elo ' "$log" | sed 's/^elo //; s/ (95%.*//')
  grep -m1 '^game .*forfeit' "$log" >&2 || true
  rows+=("| $label | $wdl | ${elo:-n/a} | $(grep -c '^game .*forfeit' "$log" || true) |")
  echo "   $wdl  elo ${elo:-n/a}" >&2
}

for o in "${opponents[@]}"; do
  label=$o
  case $o in uci:*|fsf:*) label=${o##*:name=} ;; net:*) label="generation 0 ($(basename "$gen0" .json))" ;; esac
  play_row "$label" "$me" "$o" "$(printf %s "$label" | tr -c 'A-Za-z0-9_-' '_')"
done
if [ -n "$fsf_spec" ] && [ -n "$movetime" ]; then
  play_row "fsf at ${movetime} ms (vzero uci at ${movetime} ms)" \
    "uci:$vzero uci --variant $variant --model $ckpt:movetime=$movetime:name=vzero-${movetime}ms" \
    "$fsf_spec:movetime=$movetime:name=fsf-${movetime}ms" "fsf_${movetime}ms"
fi

{
  if [ -n "$fsf_note" ]; then echo "Fairy-Stockfish: $fsf_note"; echo; fi
  echo "Ladder of $ckpt ($variant, $me, $games games per row, seed $seed, $(date -u +%F))"
  echo
  echo "| opponent | W/D/L, score | Elo [95%] | forfeits |"
  echo "| --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
} > "$table"
cat "$table"
echo "(games and logs in $out)"
exit
}
