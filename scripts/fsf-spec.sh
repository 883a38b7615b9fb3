# Sourced by the scripts that play a Fairy-Stockfish binary given with --fsf (ladder.sh,
# nnue-match.sh): one way to turn it into a vzero player spec.
#
# fsf_spec_head SCRIPT FSF [INI] prints `uci:FSF:variantpath=INI`, INI defaulting to the
# variants.ini beside FSF, else scripts/fsf/variants.ini (vzero's definitions); when the binary
# is not executable or the file is missing it says so, naming SCRIPT, and fails.
fsf_spec_head() {
  local script=$1 fsf=$2 ini=${3:-}
  [ -x "$fsf" ] || { echo "$script: Fairy-Stockfish binary '$fsf' is not executable" >&2; return 1; }
  if [ -z "$ini" ]; then
    if [ -f "$(dirname "$fsf")/variants.ini" ]; then ini=$(dirname "$fsf")/variants.ini; else ini=scripts/fsf/variants.ini; fi
  fi
  [ -f "$ini" ] || { echo "$script: variants.ini '$ini' not found" >&2; return 1; }
  echo "uci:$fsf:variantpath=$ini"
}
