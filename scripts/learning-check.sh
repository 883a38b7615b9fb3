#!/usr/bin/env bash
# Learning check (not a CI test): trains empire for a fixed time into a fresh run directory, then
# matches the final checkpoint against the initial network (generation 0, same search budget)
# and against the baselines, printing Elo differences with 95% intervals and a verdict.
#
# Usage: scripts/learning-check.sh [minutes=30] [run dir=runs/learning-check-<date>]
# Environment: LC_SIMS (64) simulations per move of both networks, LC_GAMES (200) games against
# generation 0, LC_BASE_GAMES (40) games against each baseline, LC_CONCURRENCY (2),
# LC_BASELINES ("random greedy alphabeta:2"), LC_SETUP=0 skips scripts/setup.sh.
# (200 games give a 95% interval of about ±50 Elo; 40 gave ±100, too wide to see a real gain.)
# Verdict: "learned" when the lower end of the 95% interval of final vs generation 0 is above 0.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-30}
RUN=${2:-runs/learning-check-$(date +%Y%m%d-%H%M%S)}
SIMS=${LC_SIMS:-64}
GAMES=${LC_GAMES:-200}
BASE_GAMES=${LC_BASE_GAMES:-40}
CONC=${LC_CONCURRENCY:-2}
BASELINES=${LC_BASELINES:-random greedy alphabeta:2}
case "$RUN" in *:*) echo "error: the run directory must not contain ':' (player specs split on it)" >&2; exit 2 ;; esac
if [ -e "$RUN" ] && [ -n "$(ls -A "$RUN" 2>/dev/null)" ]; then
  echo "error: $RUN exists and is not empty; the check needs a fresh run directory" >&2
  exit 2
fi
if [ "${LC_SETUP:-1}" != 0 ]; then
  bash scripts/setup.sh
fi
cargo build --release --locked -p vzero
V=target/release/vzero

echo "== training empire for $MINUTES minutes into $RUN"
"$V" train --variant empire --run "$RUN" --minutes "$MINUTES" --quiet

G0=$(ls "$RUN"/checkpoints/gen-000000-step-*.json | head -n 1)
FINAL=$(ls "$RUN"/checkpoints/gen-*-step-*.json | sort | tail -n 1)
echo "== initial $(basename "$G0" .json), final $(basename "$FINAL" .json)"

# match A B GAMES -> prints the summary; sets ELO_LINE to its "elo ..." line
match() {
  local out
  out=$("$V" match "$1" "$2" --variant empire --games "$3" --concurrency "$CONC" --seed 1 --no-progress --pgn "$RUN/learning-check.pgn")
  echo "$out" | sed 's/^/  /'
  ELO_LINE=$(echo "$out" | grep '^elo ' || true)
}
lower() { echo "$1" | sed -n 's/^elo [^ ]* \[\([^,]*\),.*/\1/p'; }

declare -a SUMMARY
echo "== final vs initial (net:…:$SIMS each, $GAMES games)"
match "net:$FINAL:$SIMS" "net:$G0:$SIMS" "$GAMES"
VS_G0="$ELO_LINE"
SUMMARY+=("vs gen 0            ${ELO_LINE:-no result}")
for b in $BASELINES; do
  echo "== final vs $b ($BASE_GAMES games)"
  match "net:$FINAL:$SIMS" "$b" "$BASE_GAMES"
  SUMMARY+=("$(printf 'vs %-17s' "$b") ${ELO_LINE:-no result}")
  echo "== gen 0 vs $b ($BASE_GAMES games)"
  match "net:$G0:$SIMS" "$b" "$BASE_GAMES"
  SUMMARY+=("$(printf 'gen 0 vs %-11s' "$b") ${ELO_LINE:-no result}")
done

echo "== summary: Elo of the final network ($(basename "$FINAL" .json)) after $MINUTES minutes, 95% intervals"
for l in "${SUMMARY[@]}"; do echo "  $l"; done
if [ -f "$RUN/arena/elo.csv" ]; then
  echo "  gauntlet elo.csv (random = 0): $RUN/arena/elo.csv, plot $RUN/plots/elo.svg"
  sed 's/^/    /' "$RUN/arena/elo.csv"
fi
LO=$(lower "$VS_G0")
if [ "$FINAL" = "$G0" ]; then
  echo "verdict: did not learn (no checkpoint after generation 0)"
  exit 1
fi
case "$LO" in
  +inf) ok=1 ;;
  -inf|"") ok=0 ;;
  *) ok=$(awk -v x="$LO" 'BEGIN { print (x + 0 > 0) ? 1 : 0 }') ;;
esac
if [ "$ok" = 1 ]; then
  echo "verdict: learned (final vs gen 0: lower bound $LO > 0)"
else
  echo "verdict: did not learn (final vs gen 0: lower bound ${LO:-?} <= 0)"
  exit 1
fi
