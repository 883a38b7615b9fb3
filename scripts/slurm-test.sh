#!/usr/bin/env bash
# The Slurm scripts of deploy/slurm/ on a real, single-node Slurm: this script installs Debian's
# slurm-wlm and munge when they are missing (apt-get; needs root), writes a minimal slurm.conf of
# its own in a temporary folder (made for a container without systemd or cgroups: process
# tracking by /proc, no task plugin, no accounting), starts munged, slurmctld and slurmd on this
# machine and a local S3 server (moto, from .venv), and submits, on one s3:// run with the tiny
# test config:
#   - the learner (deploy/slurm/learner.sbatch) and a 2-task self-play array
#     (deploy/slurm/selfplay.sbatch), and waits until a checkpoint after generation 0 is
#     published and a chunk written by each task names such a newer network;
#   - a 1-task NNUE labelling array (deploy/slurm/nnue-play.sbatch, teacher alphabeta:1) on a
#     second run, and waits for its first chunk;
# then cancels self-play task 1 (scancel), requeues it (scontrol requeue) and waits until it
# writes again (a new process, a newer network); requeues the running learner and waits until
# the new one holds the run's lease and publishes; submits a second learner job, which must be
# refused and wait, cancels the first and waits until the second takes the run over and
# publishes; cancels everything, runs `vzero check` on both runs (it must pass) and tears
# everything down (daemons stopped, temporary folder removed).
# Prints one summary line `slurm-test: ok …` with the timings; any step that does not happen
# in time fails with `slurm-test: FAILED: …` and the logs' last lines.
#
# Usage: scripts/slurm-test.sh [--minutes N]     (default 15: the whole test's time bound)
#   VZERO_BIN=path/to/vzero   the binaries to test (default target/release/vzero, built if missing)
# Not part of scripts/test.sh (it installs system packages and starts daemons); about 1.5 minutes
# on the project's 2-core machine (README, "Many machines").
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

MINUTES=15
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) MINUTES=$2; shift ;;
    *) echo "usage: scripts/slurm-test.sh [--minutes N]" >&2; exit 2 ;;
  esac
  shift
done
case "$MINUTES" in ''|*[!0-9]*) echo "usage: scripts/slurm-test.sh [--minutes N] (N: whole minutes)" >&2; exit 2 ;; esac
T0=$SECONDS
DEADLINE=$((SECONDS + MINUTES * 60))

log() { echo "slurm-test: $(printf '%4d' $((SECONDS - T0))) s: $*" >&2; }
die() {
  echo "slurm-test: FAILED after $((SECONDS - T0)) s: $*" >&2
  # What Slurm thought of each job then (state and reason), so a failure names its cause.
  command -v squeue >/dev/null && squeue -h -o '  job %i: %T (%r)' 2>/dev/null >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (apt-get install, and the Slurm daemons run as root here)"

# ---- What it needs ---------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  log "installing slurm-wlm and munge (apt-get)"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null
  log "installed $(dpkg-query -W -f '${Package} ${Version}, ' slurm-wlm munge | sed 's/, $//')"
fi
if [ ! -x .venv/bin/moto_server ]; then
  VZERO_SKIP_PYTHON=1 VZERO_SKIP_FSF=1 VZERO_SKIP_DEPLOY=1 bash scripts/setup.sh
fi
BIN=${VZERO_BIN:-$ROOT/target/release/vzero}
if [ ! -x "$BIN" ] || [ ! -x "$(dirname "$BIN")/vzero-torch" ]; then
  [ -z "${VZERO_BIN:-}" ] || die "VZERO_BIN=$VZERO_BIN: no vzero with vzero-torch beside it there"
  cargo build --release --locked -q -p vzero
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
PY="$ROOT/.venv/bin/python"

# ---- Teardown, on every exit -----------------------------------------------------------------
WORK=$(mktemp -d /tmp/vzero-slurm.XXXXXX)
chmod 711 "$WORK"   # munged wants its socket's folder searchable by all
mkdir -p "$WORK/logs" "$WORK/state" "$WORK/spool"
MOTO_PID=""
JOBS=()          # Slurm job ids submitted here
VZ_PIDS=()       # pids of the vzero processes the jobs ran (from their logs)
export SLURM_CONF="$WORK/slurm.conf"
cleanup() {
  local rc=$?
  set +e
  if [ -f "$SLURM_CONF" ]; then
    for j in "${JOBS[@]:-}"; do [ -n "$j" ] && scancel "$j" 2>/dev/null; done
    # Give the jobs a moment to go (KillWait is 2 s), then stop both daemons.
    for _ in $(seq 1 30); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
    timeout 20 scontrol shutdown >/dev/null 2>&1
  fi
  # stop_pid FILE: the daemon whose pid FILE names, asked first (TERM), killed after 10 s.
  stop_pid() {
    local p
    p=$(cat "$WORK/$1" 2>/dev/null) || return 0
    kill -0 "$p" 2>/dev/null || return 0
    kill "$p" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.25; done
    kill -9 "$p" 2>/dev/null
  }
  stop_pid slurmctld.pid; stop_pid slurmd.pid; stop_pid munged.pid
  for p in "${VZ_PIDS[@]:-}"; do
    [ -n "$p" ] && grep -q vzero "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p" 2>/dev/null
  done
  [ -n "$MOTO_PID" ] && kill "$MOTO_PID" 2>/dev/null && wait "$MOTO_PID" 2>/dev/null
  if [ "$rc" != 0 ]; then
    for f in "$WORK"/logs/*.out "$WORK/slurmctld.log" "$WORK/slurmd.log"; do
      [ -f "$f" ] || continue
      echo "---- last lines of $(basename "$f")" >&2
      tail -n 6 "$f" >&2
    done
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

# wait_for WHAT SECONDS CMD...: until CMD succeeds, at most SECONDS (and never past the deadline).
wait_for() {
  local what=$1 limit=$2; shift 2
  local until=$((SECONDS + limit))
  [ "$until" -le "$DEADLINE" ] || until=$DEADLINE
  until "$@"; do
    [ "$SECONDS" -lt "$until" ] || die "$what: not within $limit s (or the test's $MINUTES minutes)"
    sleep 1
  done
}

# ---- Munge and Slurm, this machine only --------------------------------------------------------
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
CTLD_PORT=$(free_port); SLURMD_PORT=$(free_port)
[ "$CTLD_PORT" != "$SLURMD_PORT" ] || SLURMD_PORT=$(free_port)
NODE=$(hostname -s)
head -c 1024 /dev/urandom >"$WORK/munge.key"
chmod 600 "$WORK/munge.key"
munged -f --socket="$WORK/munge.sock" --key-file="$WORK/munge.key" --pid-file="$WORK/munged.pid" \
  --log-file="$WORK/munged.log" --seed-file="$WORK/munged.seed"
# The node claims 6 CPUs whatever the machine has (config_overrides), so that two learner jobs and
# three array tasks of one CPU each run at once; job processes are tracked through /proc (linuxproc), no
# cgroup is used (task/none, no accounting): it works in a container without systemd.
cat >"$SLURM_CONF" <<EOF
ClusterName=vzerotest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$WORK/munge.sock
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
MinJobAge=600
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=6 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -i
slurmd
node_idle() { [ "$(sinfo -h -n "$NODE" -o %T 2>/dev/null)" = idle ]; }
wait_for "the Slurm node to come up idle" 60 node_idle
T_SLURM=$((SECONDS - T0))
log "Slurm $(sinfo -V | cut -d' ' -f2) up: node $NODE idle (slurmctld :$CTLD_PORT, slurmd :$SLURMD_PORT)"

# ---- The local S3 server and the runs ----------------------------------------------------------
"$ROOT/.venv/bin/moto_server" -H 127.0.0.1 -p 0 >"$WORK/moto.log" 2>&1 &
MOTO_PID=$!
moto_port() { grep -q 'Running on http://127.0.0.1:' "$WORK/moto.log" 2>/dev/null; }
wait_for "moto to name its port" 60 moto_port
MPORT=$(grep -o 'Running on http://127.0.0.1:[0-9]*' "$WORK/moto.log" | head -n1 | sed 's/.*://')
EP="http://127.0.0.1:$MPORT"
bucket_made() { curl -sf -X PUT "$EP/slurm" >/dev/null 2>&1; }
wait_for "the bucket on moto" 30 bucket_made
RUN=s3://slurm/runs/tiny
NNUE_RUN=s3://slurm/runs/nnue

# What the jobs get from this shell (sbatch passes it on, and a requeue keeps it).
export AWS_ENDPOINT="$EP" AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export VZERO_CACHE="$WORK/cache" VZERO_BIN="$BIN"
CFG="$WORK/tiny.toml"
# The tiny test network; checkpoints every 15 steps, polled every second (the tiny config's 3 and
# 0.2 s would load moto with hundreds of checkpoints); no gauntlet.
sed -e 's/^publish_every = .*/publish_every = 15/' -e 's/^poll_seconds = .*/poll_seconds = 1.0/' \
  configs/tests/tiny-empire.toml >"$CFG"
printf '\n[gauntlet]\nevery = 0\n' >>"$CFG"

# s3 CMD ARGS: what the runs hold, read through the S3 API (boto3 of .venv, beside moto).
cat >"$WORK/s3.py" <<'EOF'
import os, re, sys
import boto3
s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT"], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
def keys(prefix):
    out, token = [], None
    while True:
        kw = {"Bucket": "slurm", "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        r = s3.list_objects_v2(**kw)
        out += [o["Key"] for o in r.get("Contents", [])]
        if not r.get("IsTruncated"):
            return out
        token = r["NextContinuationToken"]
def main(cmd, prefix):
    if cmd == "generation":
        # the newest published checkpoint's generation (-1: none); its metadata file makes it one
        gens = [int(m.group(1)) for k in keys(prefix + "/checkpoints/") for m in [re.search(r"gen-(\d+)-step-\d+\.json$", k)] if m]
        return str(max(gens, default=-1))
    if cmd == "writer":
        # chunks of the process PID, and the newest network generation its newest three chunks name
        pid = sys.argv[3]
        ks = sorted(k for k in keys(prefix + "/data/") if re.search(r"_p%sw\d+-\d+\.h5$" % pid, k))
        gen = -1
        for k in ks[-3:]:
            body = s3.get_object(Bucket="slurm", Key=k)["Body"].read()
            for m in re.finditer(rb"gen-(\d{6})-step-\d{9}", body):
                gen = max(gen, int(m.group(1)))
        return "%d %d" % (len(ks), gen)
    if cmd == "chunks":
        return str(len([k for k in keys(prefix + "/data/") if k.endswith(".h5")]))
    sys.exit("s3.py: unknown command " + cmd)
try:
    print(main(sys.argv[1], sys.argv[2]))
except Exception as e:  # a slow or busy server: nothing yet, the caller asks again
    sys.stderr.write("s3.py: %s\n" % e)
    print({"generation": "-1", "writer": "0 -1"}.get(sys.argv[1], "0"))
EOF
s3() { "$PY" "$WORK/s3.py" "$@"; }
prefix_of() { echo "${1#s3://slurm/}"; }
vz() { VZERO_CACHE="$WORK/cache-test" "$BIN" "$@"; }

# ---- Submit ------------------------------------------------------------------------------------
submit() { sbatch --parsable --chdir="$WORK" "$@" | cut -d';' -f1; }
export VZERO_RUN="$RUN" VZERO_CONFIG="$CFG"
LJ=$(submit --cpus-per-task=1 --output="$WORK/logs/learner-%j.out" deploy/slurm/learner.sbatch)
JOBS+=("$LJ")
AJ=$(submit --array=0-1 --cpus-per-task=1 --output="$WORK/logs/selfplay-%A_%a.out" deploy/slurm/selfplay.sbatch)
JOBS+=("$AJ")
NJ=$(VZERO_RUN="$NNUE_RUN" VZERO_VARIANT=empire VZERO_TEACHER=alphabeta:1 \
  VZERO_ARGS="--games-per-chunk 8 --max-plies 40" \
  submit --array=0 --cpus-per-task=1 --output="$WORK/logs/nnue-%A_%a.out" deploy/slurm/nnue-play.sbatch)
JOBS+=("$NJ")
log "submitted: learner $LJ, self-play array ${AJ}_[0-1], NNUE labelling ${NJ}_0 (run $RUN, $NNUE_RUN)"

state_of() { squeue -h -j "$1" -o %T 2>/dev/null | head -n1; }
all_running() { [ "$(state_of "$LJ")" = RUNNING ] && [ "$(state_of "${AJ}_0")" = RUNNING ] && [ "$(state_of "${AJ}_1")" = RUNNING ] && [ "$(state_of "${NJ}_0")" = RUNNING ]; }
wait_for "all four jobs running" 60 all_running
# pid_of LOG N: the pid the Nth start (restart N-1) of a job printed in its log.
pid_of() { grep -o "(restart $(($2 - 1))) on .*, pid [0-9]*" "$1" 2>/dev/null | tail -n1 | sed 's/.*pid //'; }
have_pid() { [ -n "$(pid_of "$1" "$2")" ]; }
LOG0="$WORK/logs/selfplay-${AJ}_0.out"; LOG1="$WORK/logs/selfplay-${AJ}_1.out"; LOGL="$WORK/logs/learner-$LJ.out"
wait_for "the jobs' first log lines" 30 have_pid "$LOGL" 1
wait_for "the jobs' first log lines" 30 have_pid "$LOG0" 1
wait_for "the jobs' first log lines" 30 have_pid "$LOG1" 1
PL=$(pid_of "$LOGL" 1); P0=$(pid_of "$LOG0" 1); P1=$(pid_of "$LOG1" 1)
VZ_PIDS+=("$PL" "$P0" "$P1")
log "running: learner pid $PL, self-play task 0 pid $P0, task 1 pid $P1"

P="$(prefix_of "$RUN")"
newer_checkpoint() { [ "$(s3 generation "$P")" -ge "${1:-1}" ]; }
wait_for "a checkpoint after generation 0" 180 newer_checkpoint 1
T_CKPT=$((SECONDS - T0))
log "checkpoint generation $(s3 generation "$P") published"
# plays_newer PID: the process has written a chunk that names a network after generation 0.
plays_newer() { local n g; read -r n g < <(s3 writer "$P" "$1"); [ "$n" -gt 0 ] && [ "$g" -ge 1 ]; }
wait_for "a chunk of self-play task 0 (pid $P0) naming a newer network" 180 plays_newer "$P0"
wait_for "a chunk of self-play task 1 (pid $P1) naming a newer network" 180 plays_newer "$P1"
T_PICKUP=$((SECONDS - T0))
log "both tasks picked it up: task 0 $(s3 writer "$P" "$P0" | awk '{print $1 " chunks, generation " $2}'), task 1 $(s3 writer "$P" "$P1" | awk '{print $1 " chunks, generation " $2}')"
NP="$(prefix_of "$NNUE_RUN")"
nnue_wrote() { [ "$(s3 chunks "$NP")" -gt 0 ]; }
wait_for "a chunk of the NNUE labelling task" 120 nnue_wrote
log "NNUE labelling task wrote $(s3 chunks "$NP") chunks"

# requeue JOB: puts a job (running, or ended by scancel) back in the queue, as a preemption with
# --requeue does. A requeued job waits out a fixed 2-minute delay before it may start again; once
# it is pending, it is allowed to start now (nothing else changes).
requeue() {
  scontrol requeue "$1"
  pending() { [ "$(state_of "$1")" = PENDING ]; }
  wait_for "job $1 pending after scontrol requeue" 60 pending "$1"
  scontrol update JobId="$1" StartTime=now
}
# started_or_nudged JOB LOG N: the job's Nth start is in its log; while it is still pending for
# its begin time, it is allowed to start now again. A running job that is requeued is pending
# before its old instance has finished (a learner writes its last checkpoint first), and Slurm
# sets the 2-minute requeue delay when that instance ends, which can be after the first
# StartTime=now: the one flake of this test (1 run in 4, docs/reliability.md).
started_or_nudged() {
  have_pid "$2" "$3" && return 0
  if [ "$(squeue -h -j "$1" -o '%T %r' 2>/dev/null | head -n1)" = "PENDING BeginTime" ]; then
    scontrol update JobId="$1" StartTime=now 2>/dev/null
  fi
  return 1
}

# ---- Cancel a self-play task, then requeue it ----------------------------------------------------
scancel "${AJ}_1"
cancelled() { [ -z "$(state_of "${AJ}_1")" ] && ! kill -0 "$P1" 2>/dev/null; }
wait_for "self-play task 1 to be cancelled" 30 cancelled
T_CANCEL=$((SECONDS - T0))
[ "$(state_of "${AJ}_0")" = RUNNING ] || die "self-play task 0 stopped with task 1"
BEFORE=$(s3 writer "$P" "$P1" | cut -d' ' -f1)
log "task 1 cancelled (scancel ${AJ}_1: $(scontrol show job "${AJ}_1" | grep -o 'JobState=[A-Z]*'), $BEFORE chunks written); task 0 still running"
requeue "${AJ}_1"
wait_for "the requeued task 1 to start" 60 started_or_nudged "${AJ}_1" "$LOG1" 2
P1B=$(pid_of "$LOG1" 2)
VZ_PIDS+=("$P1B")
[ "$P1B" != "$P1" ] || die "the requeued task runs with the old pid $P1"
wait_for "a chunk of the requeued task 1 (pid $P1B) naming a newer network" 180 plays_newer "$P1B"
T_REQUEUED=$((SECONDS - T0))
log "task 1 requeued (restart 1, pid $P1B) and writing again: $(s3 writer "$P" "$P1B" | awk '{print $1 " chunks, generation " $2}')"

# ---- Requeue the running learner ------------------------------------------------------------------
GEN_BEFORE=$(s3 generation "$P")
requeue "$LJ"
wait_for "the requeued learner to start" 60 started_or_nudged "$LJ" "$LOGL" 2
PLB=$(pid_of "$LOGL" 2)
VZ_PIDS+=("$PLB")
holds_lease() { vz status --run "$RUN" 2>/dev/null | grep -q "^learner .*pid $PLB "; }
wait_for "the requeued learner (pid $PLB) to hold the run's lease" 120 holds_lease
wait_for "a checkpoint of the requeued learner (after generation $GEN_BEFORE)" 180 newer_checkpoint $((GEN_BEFORE + 1))
T_LEARNER=$((SECONDS - T0))
log "learner requeued (pid $PL -> $PLB): holds the lease, published generation $(s3 generation "$P")"

# ---- A second learner job: refused while the first runs, it takes over once that one is gone -----
LJ2=$(submit --cpus-per-task=1 --output="$WORK/logs/learner2-%j.out" deploy/slurm/learner.sbatch)
JOBS+=("$LJ2")
LOGL2="$WORK/logs/learner2-$LJ2.out"
refused() { grep -q 'has a learner already' "$LOGL2" 2>/dev/null && grep -q 'trying again in 15 s' "$LOGL2"; }
wait_for "the second learner job to be refused and wait" 90 refused
[ "$(state_of "$LJ2")" = RUNNING ] || die "the refused learner job $LJ2 did not wait for the lease"
P2A=$(pid_of "$LOGL2" 1)
log "second learner job $LJ2 refused while job $LJ holds the run ($(grep -m1 -o 'has a learner already: host [^,]*, pid [0-9]*' "$LOGL2")); it waits"
scancel "$LJ"
learner_gone() { [ -z "$(state_of "$LJ")" ] && ! kill -0 "$PLB" 2>/dev/null; }
wait_for "the first learner job to end after scancel" 30 learner_gone
retried() { local p; p=$(pid_of "$LOGL2" 1); [ -n "$p" ] && [ "$p" != "$P2A" ]; }
wait_for "the second learner job to try again" 40 retried
PL2=$(pid_of "$LOGL2" 1)
VZ_PIDS+=("$P2A" "$PL2")
GEN_BEFORE=$(s3 generation "$P")
holds_lease2() { vz status --run "$RUN" 2>/dev/null | grep -q "^learner .*pid $PL2 "; }
wait_for "the second learner (pid $PL2) to hold the run's lease" 60 holds_lease2
wait_for "a checkpoint of the second learner (after generation $GEN_BEFORE)" 180 newer_checkpoint $((GEN_BEFORE + 1))
T_SECOND=$((SECONDS - T0))
log "second learner job took the run over (pid $PL2) and published generation $(s3 generation "$P")"

# ---- Stop everything and check the runs -----------------------------------------------------------
scancel "$LJ2" "$AJ" "$NJ"
none_left() {
  [ -z "$(squeue -h 2>/dev/null)" ] || return 1
  local p; for p in "${VZ_PIDS[@]}"; do ! kill -0 "$p" 2>/dev/null || return 1; done
}
wait_for "every job to end after scancel" 60 none_left
OUT=$(vz check --run "$RUN" 2>&1) || { echo "$OUT" >&2; die "vzero check found problems in $RUN"; }
CHECK=$(echo "$OUT" | tail -n1)
OUTN=$(vz check --run "$NNUE_RUN" 2>&1) || { echo "$OUTN" >&2; die "vzero check found problems in $NNUE_RUN"; }
CHECKN=$(echo "$OUTN" | tail -n1)
log "$CHECK"
log "$CHECKN"
echo "slurm-test: ok in $((SECONDS - T0)) s: Slurm up at ${T_SLURM} s; checkpoint after generation 0 at ${T_CKPT} s, both self-play tasks playing it at ${T_PICKUP} s; task 1 cancelled at ${T_CANCEL} s, requeued and writing again at ${T_REQUEUED} s; learner requeued and publishing at ${T_LEARNER} s; a second learner job refused, then taking the run over at ${T_SECOND} s; vzero check passed on both runs"
echo "slurm-test: $CHECK"
echo "slurm-test: $CHECKN"
exit
}
