#!/usr/bin/env bash
# Side-by-side inference throughput of this checkout against an older commit:
#   scripts/nn-compare.sh [OLD_REV (default eb26521)] [ROUNDS (default 5)] [--variant V] [--nets BxC,...] [--batches 1,8,32,128]
# Builds model/examples/nnsbs.rs (which uses only API older than the fused inference path)
# against OLD_REV in a worktree under ${NN_COMPARE_DIR:-/tmp/vzero-nn-compare} with its own
# target dir (minutes the first time), then alternates old and new runs, one repetition each per
# round, and prints medians of positions/s (wall clock and this thread's CPU time) and GFLOP/s
# (nominal FLOPs of the full forward pass, NetConfig::flops_per_position) per batch.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-eb26521}
rounds=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
dir=${NN_COMPARE_DIR:-/tmp/vzero-nn-compare}/$old
bash scripts/setup.sh >/dev/null
if [ ! -d "$dir" ]; then
  mkdir -p "$(dirname "$dir")"
  git worktree add --detach "$dir" "$old" >/dev/null
fi
ln -sfn "$(readlink -f .venv)" "$dir/.venv"
cp model/examples/nnsbs.rs "$dir/model/examples/nnsbs.rs"
(cd "$dir" && cargo build -q --release -p vzero-model --example nnsbs)
cargo build -q --release -p vzero-model --example nnsbs --example nnbench
# MFLOP per position of each net (column 4 of nnbench's table)
flops=$(target/release/examples/nnbench --variant empire "$@" --batches 1 --threads 1 --train-batch 0 --reps 1 |
  awk -F'|' '/^\| [0-9]+x[0-9]+ / {gsub(/ /, "", $2); gsub(/ /, "", $4); print $2 "=" $4}')
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); old = $old, new = $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'), $rounds rounds"
out=$(mktemp)
for r in $(seq "$rounds"); do
  "$dir/target/release/examples/nnsbs" --variant empire "$@" --reps 1 --label old >>"$out"
  target/release/examples/nnsbs --variant empire "$@" --reps 1 --label new >>"$out"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
FLOPS="$flops" python3 - "$out" <<'EOF'
import collections, os, statistics, sys
mflop = dict(kv.split("=") for kv in os.environ["FLOPS"].split())
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, label, net, batch, wall, cpu = line.split()
    runs[(net, int(batch), label)].append((float(wall), float(cpu)))
print("| net | batch | old pos/s (GFLOP/s) | new pos/s (GFLOP/s) | new/old | old CPU-time pos/s | new CPU-time pos/s | new/old |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for net, batch in sorted({(n, b) for n, b, _ in runs}):
    med = {l: [statistics.median(x[i] for x in runs[(net, batch, l)]) for i in (0, 1)] for l in ("old", "new")}
    g = lambda v: v * float(mflop.get(net, "nan")) / 1e3
    (ow, oc), (nw, nc) = med["old"], med["new"]
    print(f"| {net} | {batch} | {ow:.0f} ({g(ow):.1f}) | {nw:.0f} ({g(nw):.1f}) | {nw/ow:.2f} | {oc:.0f} | {nc:.0f} | {nc/oc:.2f} |")
EOF
rm -f "$out"
exit
}
