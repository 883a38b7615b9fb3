#!/usr/bin/env bash
# Fault test of whole runs: on disk and on a local S3 server (moto, from .venv), self-play and
# learner processes are SIGKILLed at random moments, a second learner is started against a
# held run, the S3 server is paused (SIGSTOP) and, through a proxy, answers errors for a
# while, and a disk (tmpfs) fills up and is freed. After each fault the run is checked with
# `vzero check` (every chunk readable, no game counted twice, checkpoints complete with
# generations and steps strictly increasing, metrics steps increasing, no partial file or
# object visible) and resumed; at the end `vzero openings` and `vzero gauntlet` read each run.
#
# Usage: scripts/chaos.sh [--short] [--seed N]
#   --short   the form scripts/test.sh runs (about 3 minutes on 2 cores)
#   default   the long form (about 15 minutes): more kills, a 30 s pause, longer outages
# Prints a summary line `chaos: ...` with the counts; exits non-zero on the first broken
# invariant or failed resume. Needs target/release/vzero (built if missing) and .venv
# (scripts/setup.sh). The disk-full phase needs root (mount -t tmpfs); without it, it says so
# and the summary counts it as not run.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SHORT=0
SEED=${CHAOS_SEED:-1}
while [ $# -gt 0 ]; do
  case "$1" in
    --short) SHORT=1 ;;
    --seed) SEED=$2; shift ;;
    *) echo "usage: scripts/chaos.sh [--short] [--seed N]" >&2; exit 2 ;;
  esac
  shift
done
RANDOM=$SEED

if [ "$SHORT" = 1 ]; then
  KILLS=3; PAUSE_S=8; ERRORS_S=8; PHASE_MIN=1; FAULT_MIN=0.5; GAP=2
else
  KILLS=12; PAUSE_S=30; ERRORS_S=30; PHASE_MIN=4; FAULT_MIN=2; GAP=5
fi

# Requests the store does not answer are abandoned (and retried) after this many seconds, less
# than the pause, so that the pause exercises the retries of create-if-absent uploads.
S3_TIMEOUT_S=5

BIN="$ROOT/target/release/vzero"
if [ ! -x "$BIN" ] || [ ! -x "$ROOT/target/release/vzero-torch" ]; then
  cargo build --release -q -p vzero
fi
MOTO="$ROOT/.venv/bin/moto_server"
PY="$ROOT/.venv/bin/python"
[ -x "$MOTO" ] || { echo "chaos: $MOTO missing: run scripts/setup.sh" >&2; exit 1; }

WORK=$(mktemp -d /tmp/vzero-chaos.XXXXXX)
PIDS=()
MNT="$WORK/small-disk"
# Runs on every exit and keeps the script's exit status: `set -e` stays in force inside an EXIT
# trap, so without `set +e` the first process that is already gone (most are: they were killed
# on purpose) would turn a passing run into exit 1.
cleanup() {
  local rc=$?
  set +e
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] || continue
    kill -CONT "$p" 2>/dev/null
    kill -9 "$p" 2>/dev/null
  done
  jobs -p | xargs -r kill -9 2>/dev/null
  mountpoint -q "$MNT" 2>/dev/null && umount -l "$MNT" 2>/dev/null
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

log() { echo "chaos: $*" >&2; }
die() { echo "chaos: FAILED: $*" >&2; exit 1; }

# Counters for the summary.
N_KILLS=0; N_REFUSED=0; N_PAUSES=0; N_ERROR_WINDOWS=0; N_ERRORS_SERVED=0; N_DISK_FULL=0; N_CHECKS=0
DISK_FULL_RUN="no"

CFG="$WORK/tiny.toml"
sed 's/^threads = 1$/threads = 1\nlog_every = 3/' configs/tests/tiny-empire.toml > "$CFG"
printf '\n[gauntlet]\nevery = 1000\ngames = 2\nsims = 4\nopponents = ["random"]\nmax_plies = 40\n' >> "$CFG"

# logged_port LOG PREFIX WHAT: the port a server started with port 0 names after PREFIX in LOG
# (waits up to 60 s for it).
logged_port() {
  local p
  for _ in $(seq 1 600); do
    p=$(grep -o "$2[0-9]*" "$1" 2>/dev/null | head -n1 | sed "s|^$2||")
    if [ -n "$p" ]; then echo "$p"; return 0; fi
    sleep 0.1
  done
  die "$3 named no port in 60 s (see $1)"
}

# vzero with the object-storage environment pointed at $1 (an endpoint), its own cache $2.
# `env` execs vzero (which execs vzero-torch), so `vz … &` leaves the process's own pid in $!.
vz() {
  local endpoint=$1 cache=$2; shift 2
  env AWS_ENDPOINT="$endpoint" AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
    AWS_REGION=us-east-1 VZERO_S3_TIMEOUT_S=$S3_TIMEOUT_S VZERO_CACHE="$cache" "$BIN" "$@"
}

# check RUN ENDPOINT: the invariants hold; prints the counts line.
LAST_COUNTS=""
check() {
  local run=$1 endpoint=${2:-none} out
  N_CHECKS=$((N_CHECKS + 1))
  if ! out=$(vz "$endpoint" "$WORK/cache-check" check --run "$run" 2>&1); then
    echo "$out" >&2
    die "invariants broken in $run"
  fi
  LAST_COUNTS=$(echo "$out" | tail -n1)
  log "  $LAST_COUNTS"
}

# A run with 2 self-play processes and a learner, killed at random moments.
# kill_phase RUN ENDPOINT TAG
kill_phase() {
  local run=$1 endpoint=$2 tag=$3
  local -a role=(learn selfplay selfplay) pid=(0 0 0)
  start() {  # start I
    local i=$1 args
    if [ "${role[$i]}" = learn ]; then args=(learn --config "$CFG" --run "$run" --minutes "$PHASE_MIN" --quiet)
    else args=(selfplay --config "$CFG" --run "$run" --minutes "$PHASE_MIN" --quiet); fi
    env AWS_ENDPOINT="$endpoint" AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
      AWS_REGION=us-east-1 VZERO_S3_TIMEOUT_S=$S3_TIMEOUT_S VZERO_CACHE="$WORK/cache-$tag-$i" "$BIN" "${args[@]}" >>"$WORK/$tag-$i.log" 2>&1 &
    pid[$i]=$!
    PIDS+=("${pid[$i]}")
  }
  for i in 0 1 2; do start "$i"; done
  # Wait until the learner holds the run's lease (its lock file, or object through the store).
  local t0=$SECONDS
  until vz "$endpoint" "$WORK/cache-$tag-status" status --run "$run" 2>/dev/null | grep -q "^learner .*pid ${pid[0]} "; do
    [ $((SECONDS - t0)) -lt 90 ] || die "$tag: the learner took no lease within 90 s (see its log: $(tail -n1 "$WORK/$tag-0.log"))"
    sleep 0.3
  done
  # A second learner on the held run is refused, naming the holder.
  local out
  if out=$(vz "$endpoint" "$WORK/cache-$tag-second" learn --config "$CFG" --run "$run" --steps 1000000 --minutes 0.2 --quiet 2>&1); then
    die "a second learner was let into $run: $out"
  fi
  echo "$out" | grep -q "has a learner already" || die "second learner refused without naming the holder: $out"
  N_REFUSED=$((N_REFUSED + 1))
  log "$tag: second learner refused: $(echo "$out" | tail -n1 | cut -c1-160)"
  for k in $(seq 1 "$KILLS"); do
    sleep $((1 + RANDOM % GAP)).$((RANDOM % 10))
    local i=$((RANDOM % 3))
    if kill -0 "${pid[$i]}" 2>/dev/null; then
      grep -q vzero "/proc/${pid[$i]}/cmdline" 2>/dev/null || die "pid ${pid[$i]} is not a vzero process"
      kill -9 "${pid[$i]}"; wait "${pid[$i]}" 2>/dev/null || true
      N_KILLS=$((N_KILLS + 1))
      log "$tag: kill $k: SIGKILL ${role[$i]} (pid ${pid[$i]})"
    fi
    check "$run" "$endpoint"
    start "$i"
  done
  for i in 0 1 2; do kill -9 "${pid[$i]}" 2>/dev/null || true; wait "${pid[$i]}" 2>/dev/null || true; done
  N_KILLS=$((N_KILLS + 3))
  check "$run" "$endpoint"
}

# resume RUN ENDPOINT TAG: `vzero train` goes on from the run as it is, and exits 0.
resume() {
  local run=$1 endpoint=$2 tag=$3
  vz "$endpoint" "$WORK/cache-$tag-resume" train --run "$run" --games 1 --minutes 0.5 --quiet >"$WORK/$tag-resume.log" 2>&1 \
    || { cat "$WORK/$tag-resume.log" >&2; die "$tag: resume failed"; }
  check "$run" "$endpoint"
}

# readers RUN ENDPOINT TAG: openings counts every game the check counted; a gauntlet runs.
readers() {
  local run=$1 endpoint=$2 tag=$3 games out
  check "$run" "$endpoint"
  games=$(echo "$LAST_COUNTS" | sed -n 's/.*(\([0-9]*\) games.*/\1/p')
  out=$(vz "$endpoint" "$WORK/cache-$tag-openings" openings --variant empire --from "$run" --plies 2 --format json --no-progress) \
    || die "$tag: vzero openings failed"
  echo "$out" | "$PY" -c "import json,sys; g=json.load(sys.stdin)['games']; sys.exit(0 if g == $games else 1)" \
    || die "$tag: vzero openings counted other games than the run's $games"
  vz "$endpoint" "$WORK/cache-$tag-gauntlet" gauntlet --run "$run" >"$WORK/$tag-gauntlet.log" 2>&1 \
    || { cat "$WORK/$tag-gauntlet.log" >&2; die "$tag: vzero gauntlet failed"; }
  log "$tag: openings and gauntlet read the run ($games games)"
}

T0=$(date +%s)

# ---- 1. On disk ------------------------------------------------------------------------------
log "disk: $KILLS random kills of 2 self-play processes and a learner"
DISK_RUN="$WORK/disk-run"
kill_phase "$DISK_RUN" none disk
resume "$DISK_RUN" none disk
readers "$DISK_RUN" none disk
DISK_COUNTS=$LAST_COUNTS

# ---- 2. On a local S3 server, through a proxy that can answer errors ------------------------
# Both servers bind a free port themselves (-p 0) and name it in their logs: a port found free
# here and handed over could be taken meanwhile (another test's server).
"$MOTO" -H 127.0.0.1 -p 0 >"$WORK/moto.log" 2>&1 &
MOTO_PID=$!; PIDS+=("$MOTO_PID")
MPORT=$(logged_port "$WORK/moto.log" 'Running on http://127.0.0.1:' moto) || exit 1
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$MPORT/" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf -X PUT "http://127.0.0.1:$MPORT/chaos" >/dev/null || die "could not create the bucket on moto"
FAIL="$WORK/s3-fail"
"$PY" scripts/chaos_proxy.py 0 "$MPORT" "$FAIL" >"$WORK/proxy.log" 2>&1 &
PIDS+=("$!")
PPORT=$(logged_port "$WORK/proxy.log" 'listening on 127.0.0.1:' proxy) || exit 1
for _ in $(seq 1 50); do curl -s "http://127.0.0.1:$PPORT/" >/dev/null 2>&1 && break; sleep 0.2; done
EP="http://127.0.0.1:$PPORT"
S3_RUN="s3://chaos/runs/tiny"

log "s3: $KILLS random kills of 2 self-play processes and a learner"
kill_phase "$S3_RUN" "$EP" s3

# s3_fault NAME ACTION: a `vzero train` on the S3 run while ACTION (a function) runs; the train
# rides the fault out or stops with an error, and the run's invariants hold either way.
N_RODE_OUT=0; N_STOPPED=0
s3_fault() {
  local name=$1 action=$2
  env AWS_ENDPOINT="$EP" AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
    AWS_REGION=us-east-1 VZERO_S3_TIMEOUT_S=$S3_TIMEOUT_S VZERO_CACHE="$WORK/cache-s3-$name" "$BIN" train --run "$S3_RUN" --minutes "$FAULT_MIN" --quiet >"$WORK/s3-$name.log" 2>&1 &
  local train=$!; PIDS+=("$train")
  sleep 6
  "$action"
  if wait "$train"; then
    N_RODE_OUT=$((N_RODE_OUT + 1))
    log "s3: vzero train rode out the $name"
  else
    # A store that stays unreachable past the retries may stop a process: it must stop with a
    # clear error, and the run must be intact and resume.
    N_STOPPED=$((N_STOPPED + 1))
    log "s3: vzero train stopped during the $name: $(tail -n1 "$WORK/s3-$name.log" | cut -c1-240)"
  fi
  check "$S3_RUN" "$EP"
}
pause_server() {
  log "s3: the server paused (SIGSTOP) for $PAUSE_S s during a train"
  kill -STOP "$MOTO_PID"; sleep "$PAUSE_S"; kill -CONT "$MOTO_PID"
  N_PAUSES=$((N_PAUSES + 1))
}
server_errors() {
  log "s3: the server answering 503 to every request for $ERRORS_S s during a train"
  touch "$FAIL"; sleep "$ERRORS_S"; rm -f "$FAIL"
  N_ERROR_WINDOWS=$((N_ERROR_WINDOWS + 1))
  N_ERRORS_SERVED=$(cat "$FAIL.count" 2>/dev/null || echo 0)
  log "s3: the proxy answered $N_ERRORS_SERVED requests with 503"
}
s3_fault pause pause_server
s3_fault errors server_errors
check "$S3_RUN" "$EP"
resume "$S3_RUN" "$EP" s3
readers "$S3_RUN" "$EP" s3
S3_COUNTS=$LAST_COUNTS

# ---- 3. A disk that fills up and is freed ----------------------------------------------------
mkdir -p "$MNT"
if mount -t tmpfs -o size=6m tmpfs "$MNT" 2>/dev/null; then
  DISK_FULL_RUN="yes"
  FULL_RUN="$MNT/run"
  log "full disk: vzero train on a 6 MB tmpfs until it is full"
  if vz none "$WORK/cache-full" train --config "$CFG" --run "$FULL_RUN" --minutes "$PHASE_MIN" --quiet >"$WORK/full.log" 2>&1; then
    log "full disk: the run did not fill the disk in time (df: $(df -h "$MNT" | tail -n1))"
  else
    grep -q "No space left on device" "$WORK/full.log" || { cat "$WORK/full.log" >&2; die "full disk: train failed for another reason"; }
    N_DISK_FULL=$((N_DISK_FULL + 1))
    log "full disk: stopped with: $(grep 'No space left' "$WORK/full.log" | tail -n1 | cut -c1-200)"
  fi
  check "$FULL_RUN" none
  mount -o remount,size=200m "$MNT"
  log "full disk: freed (200 MB), resuming"
  resume "$FULL_RUN" none full
else
  log "full disk: not run (mount -t tmpfs needs root)"
fi

T1=$(date +%s)
echo "chaos: ok in $((T1 - T0)) s: $N_KILLS kills, $N_REFUSED second learners refused, $N_PAUSES server pauses of $PAUSE_S s, $N_ERROR_WINDOWS error windows of $ERRORS_S s ($N_ERRORS_SERVED requests answered 503; trains rode out $N_RODE_OUT of these faults, $N_STOPPED stopped cleanly), disk full $N_DISK_FULL times (phase run: $DISK_FULL_RUN), $N_CHECKS run checks"
echo "chaos: disk run: $DISK_COUNTS"
echo "chaos: s3 run: $S3_COUNTS"
exit
}
