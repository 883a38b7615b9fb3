#!/usr/bin/env bash
# Runs test binaries again and again to find flaky tests (docs/reliability.md, "Flaky tests").
#
# Usage: scripts/repeat-tests.sh [--rounds N] [--out DIR] NAME...
#   NAME      a test binary (the file name under some crate's tests/, without .rs: learner,
#             session, s3_run, fsf_engine, uci_cli, campaign, train_loop, teacher_train, ...) or
#             `chaos` (scripts/chaos.sh --short, with the round as its seed)
#   --rounds  rounds of all the NAMEs, one after another (default 20)
#   --out     where results.tsv (round, name, exit code, seconds, time of day) and the output of
#             every failed run (NAME-rROUND.log) go (default target/repeat-tests)
# The binaries are built once first (release, as scripts/test.sh builds them) and then run as
# cargo runs them (from their crate's folder, 2 test threads). Load on the machine is welcome:
# flakes show under load. Ends with one line per NAME: runs, failures, median seconds; exits 1
# when any run failed.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=20
OUT=target/repeat-tests
NAMES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "repeat-tests.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) NAMES+=("$1") ;;
  esac
  shift
done
if [ "${#NAMES[@]}" = 0 ] || ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/repeat-tests.sh [--rounds N] [--out DIR] NAME... (see --help)" >&2
  exit 2
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
declare -A BIN DIR
# the workspace's test binaries as scripts/test.sh builds them, each with its source file
echo "repeat-tests.sh: building the test binaries (cargo test --workspace --release --no-run) ..." >&2
artifacts=$(cargo test --workspace --release --locked --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["src_path"] + "\t" + m["executable"])')
for name in "${NAMES[@]}"; do
  if [ "$name" = chaos ]; then continue; fi
  src=$(ls -d */tests/"$name".rs 2>/dev/null | head -n1 || true)
  if [ -z "$src" ]; then echo "repeat-tests.sh: no test binary '$name' (no */tests/$name.rs)" >&2; exit 2; fi
  exe=$(printf '%s\n' "$artifacts" | awk -F'\t' -v s="$ROOT/$src" '$1 == s { print $2 }' | tail -n1)
  if [ -z "$exe" ] || [ ! -x "$exe" ]; then echo "repeat-tests.sh: no built binary for $src (did the build fail?)" >&2; exit 1; fi
  BIN[$name]=$exe
  DIR[$name]=$ROOT/${src%%/*}
done
if [[ " ${NAMES[*]} " == *" chaos "* ]]; then cargo build --release --locked -p vzero >&2; fi
for r in $(seq 1 "$ROUNDS"); do
  for name in "${NAMES[@]}"; do
    t0=$(date +%s.%N)
    set +e
    if [ "$name" = chaos ]; then
      CHAOS_SEED=$r bash scripts/chaos.sh --short >"$OUT/last-$name.log" 2>&1
    else
      (cd "${DIR[$name]}" && "${BIN[$name]}" --test-threads=2) >"$OUT/last-$name.log" 2>&1
    fi
    rc=$?
    set -e
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$name" "$rc" "$secs" "$(date +%H:%M:%S)" >>"$OUT/results.tsv"
    if [ "$rc" != 0 ]; then
      cp "$OUT/last-$name.log" "$OUT/$name-r$r.log"
      echo "repeat-tests.sh: round $r: $name FAILED (exit $rc): $OUT/$name-r$r.log" >&2
    fi
  done
  echo "repeat-tests.sh: round $r of $ROUNDS done" >&2
done
bad=0
for name in "${NAMES[@]}"; do
  runs=$(awk -F'\t' -v n="$name" '$2 == n' "$OUT/results.tsv" | wc -l)
  fails=$(awk -F'\t' -v n="$name" '$2 == n && $3 != 0' "$OUT/results.tsv" | wc -l)
  median=$(awk -F'\t' -v n="$name" '$2 == n { print $4 }' "$OUT/results.tsv" | sort -n | awk '{ t[NR] = $1 } END { print NR ? t[int((NR + 1) / 2)] : 0 }')
  echo "repeat-tests: $name: $runs runs, $fails failed, median $median s"
  if awk -F'\t' -v n="$name" '$2 == n && $3 != 0 { f = 1 } END { exit !f }' "$OUT/results.tsv"; then bad=1; fi
done
[ "$bad" = 0 ] || exit 1
exit
}
