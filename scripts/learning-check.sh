#!/usr/bin/env bash
# Learning check (not a CI test): trains a variant for a fixed time into a fresh run directory,
# then matches the final checkpoint against the initial network (generation 0, same search
# budget) and against the classical baselines, and prints one summary table with Elo
# differences and 95% intervals, and a verdict.
#
# Usage: scripts/learning-check.sh [variant=empire] [minutes=30] [run dir=runs/lc-<variant>-<date>]
#        (the variant may also come from LC_VARIANT; a first argument that is a number is the
#        minutes, as before)
# Environment:
#   LC_VARIANT      variant (built-in name or definition file), when not given as an argument
#   LC_CONFIG       training config file (default: the variant's embedded CPU config)
#   LC_TRAIN=0      do not train: check an existing run directory (its newest checkpoint)
#   LC_SIMS (64)    simulations per move of both networks
#   LC_GAMES (200)  games of final vs generation 0 (200 give a 95% interval of about ±50 Elo)
#   LC_BASE_GAMES (100)   games of the final network against each baseline
#   LC_GEN0_BASE_GAMES (20)  games of generation 0 against each baseline (0 = skip)
#   LC_BASELINES ("random greedy alphabeta:2 alphabeta:3")
#   LC_CONCURRENCY (2) games played at once; LC_SETUP=0 skips scripts/setup.sh
#   LC_LABEL        label of the ablation row printed at the end (default: the config's name)
#   LC_BIN          the vzero binary to use (default: build target/release/vzero)
#   LC_TRAIN_ARGS   extra arguments of `vzero train` (e.g. "--games 1500" for a run bounded by
#                   self-play games instead of time, which other load on the machine does not skew)
# Output: the matches, then "== summary" with one line per opponent, a markdown row for the
# ablation table in docs/strength.md, and the same written to <run>/learning-check.md.
# Verdict: "learned" when the lower end of the 95% interval of final vs generation 0 is above 0.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
VARIANT=${LC_VARIANT:-empire}
if [ $# -ge 1 ] && ! [[ "$1" =~ ^[0-9.]+$ ]]; then
  VARIANT=$1
  shift
fi
MINUTES=${1:-30}
RUN=${2:-runs/lc-$(basename "$VARIANT" .toml)-$(date +%Y%m%d-%H%M%S)}
SIMS=${LC_SIMS:-64}
GAMES=${LC_GAMES:-200}
BASE_GAMES=${LC_BASE_GAMES:-100}
G0_BASE_GAMES=${LC_GEN0_BASE_GAMES:-20}
CONC=${LC_CONCURRENCY:-2}
BASELINES=${LC_BASELINES:-random greedy alphabeta:2 alphabeta:3}
TRAIN=${LC_TRAIN:-1}
case "$RUN" in *:*) echo "error: the run directory must not contain ':' (player specs split on it)" >&2; exit 2 ;; esac
if [ "$TRAIN" != 0 ] && [ -e "$RUN" ] && [ -n "$(ls -A "$RUN" 2>/dev/null)" ]; then
  echo "error: $RUN exists and is not empty; the check needs a fresh run directory (or LC_TRAIN=0)" >&2
  exit 2
fi
if [ "$TRAIN" = 0 ] && ! ls "$RUN"/checkpoints/gen-*.json >/dev/null 2>&1; then
  echo "error: LC_TRAIN=0 but $RUN has no checkpoints" >&2
  exit 2
fi
if [ "${LC_SETUP:-1}" != 0 ]; then
  bash scripts/setup.sh
fi
if [ -n "${LC_BIN:-}" ]; then
  V=$LC_BIN
else
  cargo build --release --locked -p vzero
  V=target/release/vzero
fi

if [ "$TRAIN" != 0 ]; then
  CONFIG_ARGS=()
  if [ -n "${LC_CONFIG:-}" ]; then CONFIG_ARGS=(--config "$LC_CONFIG"); fi
  echo "== training $VARIANT for $MINUTES minutes into $RUN ${LC_CONFIG:+(config $LC_CONFIG)}"
  mkdir -p "$RUN"
  # shellcheck disable=SC2086
  "$V" train --variant "$VARIANT" --run "$RUN" --minutes "$MINUTES" --quiet "${CONFIG_ARGS[@]}" ${LC_TRAIN_ARGS:-} | tee "$RUN/train.log"
fi

G0=$(ls "$RUN"/checkpoints/gen-000000-step-*.json | head -n 1)
FINAL=$(ls "$RUN"/checkpoints/gen-*-step-*.json | sort | tail -n 1)
STEPS=$(basename "$FINAL" .json | sed 's/.*-step-0*//; s/^$/0/')
SELFPLAY_GAMES=$(sed -n 's/^games \([0-9]*\) .*/\1/p' "$RUN/train.log" 2>/dev/null | tail -n 1)
RAN=$(sed -n 's/^trained .*, \([0-9.]*\) min$/\1/p' "$RUN/train.log" 2>/dev/null | tail -n 1)
MINUTES=${RAN:-$MINUTES}
echo "== initial $(basename "$G0" .json), final $(basename "$FINAL" .json)"

# match A B GAMES -> prints the summary; sets ELO_LINE to its "elo ..." line and WDL_LINE
match() {
  local out
  out=$("$V" match "$1" "$2" --variant "$VARIANT" --games "$3" --concurrency "$CONC" --seed 1 --no-progress --pgn "$RUN/learning-check.pgn")
  echo "$out" | sed 's/^/  /'
  ELO_LINE=$(echo "$out" | grep '^elo ' || true)
  WDL_LINE=$(echo "$out" | sed -n 's/^W\/D\/L \([0-9/]*\).*/\1/p')
}
# "elo +12.3 [-4.5, +30.1] ..." -> "+12 [-5, +30]"
short() { echo "$1" | sed -n 's/^elo \([^ ]*\) \[\([^,]*\), \([^]]*\)\].*/\1 \2 \3/p' | awk 'function f(x) { return (x ~ /inf/) ? x : sprintf("%+.0f", x) } { printf "%s [%s, %s]\n", f($1), f($2), f($3) }'; }
lower() { echo "$1" | sed -n 's/^elo [^ ]* \[\([^,]*\),.*/\1/p'; }

declare -a SUMMARY
declare -a CELLS
echo "== final vs initial (net:…:$SIMS each, $GAMES games)"
match "net:$FINAL:$SIMS" "net:$G0:$SIMS" "$GAMES"
VS_G0="$ELO_LINE"
SUMMARY+=("$(printf '%-22s %-34s W/D/L %s' "final vs gen 0" "$(short "$ELO_LINE")" "$WDL_LINE")")
CELLS+=("$(short "$ELO_LINE") ($GAMES)")
for b in $BASELINES; do
  echo "== final vs $b ($BASE_GAMES games)"
  match "net:$FINAL:$SIMS" "$b" "$BASE_GAMES"
  SUMMARY+=("$(printf '%-22s %-34s W/D/L %s' "final vs $b" "$(short "$ELO_LINE")" "$WDL_LINE")")
  CELLS+=("$(short "$ELO_LINE") ($BASE_GAMES)")
  if [ "$G0_BASE_GAMES" -gt 0 ]; then
    echo "== gen 0 vs $b ($G0_BASE_GAMES games)"
    match "net:$G0:$SIMS" "$b" "$G0_BASE_GAMES"
    SUMMARY+=("$(printf '%-22s %-34s W/D/L %s' "gen 0 vs $b" "$(short "$ELO_LINE")" "$WDL_LINE")")
  fi
done

LABEL=${LC_LABEL:-$(basename "${LC_CONFIG:-default}" .toml)}
{
  echo "== summary: $VARIANT, final network $(basename "$FINAL" .json) after $MINUTES minutes ($STEPS steps, ${SELFPLAY_GAMES:-?} self-play games), $SIMS simulations per move, Elo with 95% intervals"
  for l in "${SUMMARY[@]}"; do echo "  $l"; done
  echo "ablation row (label | variant | minutes | self-play games | steps | vs gen 0 | vs $(echo $BASELINES | sed 's/ / | vs /g')):"
  row="| $LABEL | $VARIANT | $MINUTES | ${SELFPLAY_GAMES:-?} | $STEPS"
  for c in "${CELLS[@]}"; do row="$row | $c"; done
  echo "$row |"
} | tee "$RUN/learning-check.md"
if [ -f "$RUN/arena/elo.csv" ]; then
  echo "  gauntlet elo.csv (random = 0): $RUN/arena/elo.csv, plot $RUN/plots/elo.svg"
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
exit
}
