#!/usr/bin/env bash
# GPU check (issue 14): run unattended on a machine with an NVIDIA GPU, in one command:
#   scripts/gpu-check.sh [minutes=5]
# 1. installs the CUDA flavour of LibTorch (TORCH_FLAVOR=full scripts/setup.sh; recreates .venv
#    and rebuilds torch-sys), builds vzero;
# 2. checks that `--device auto` resolves to CUDA (the learner prints its device);
# 3. runs the network benchmark on CUDA (scripts/bench.sh nn --device cuda, the default net and
#    a larger one) next to the CPU;
# 4. trains configs/empire-gpu.toml for the given minutes into runs/gpu-check-<date> and prints
#    the self-play and learner figures and the gauntlet ratings.
# Everything is logged to runs/gpu-check-<date>/gpu-check.log. Exit status 0 when every step
# ran and the device was CUDA. Afterwards `TORCH_FLAVOR=cpu scripts/setup.sh` returns to the
# small CPU flavour.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-5}
OUT=runs/gpu-check-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu-check.log") 2>&1

echo "== machine"
if ! command -v nvidia-smi >/dev/null; then
  echo "error: nvidia-smi not found: this check needs an NVIDIA GPU and its driver" >&2
  exit 2
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
nproc
echo "== setup: CUDA LibTorch"
TORCH_FLAVOR=full bash scripts/setup.sh
cargo build --release --locked -p vzero
V=target/release/vzero

echo "== device auto"
probe=$OUT/probe
"$V" learn --variant empire --config configs/empire-gpu.toml --run "$probe" --steps 0 --quiet 2>&1 | tee "$OUT/device.txt" || true
if ! grep -q "learner device: Cuda" "$OUT/device.txt"; then
  echo "error: --device auto did not pick CUDA (see $OUT/device.txt)" >&2
  exit 1
fi

echo "== network throughput, CUDA vs CPU (positions/s and GFLOP/s)"
bash scripts/bench.sh nn --variant empire --device cuda --nets 4x32,10x128 --batches 32,256,1024 || echo "warning: CUDA benchmark failed"
bash scripts/bench.sh nn --variant empire --device cpu --nets 4x32 --batches 32,256 || true

echo "== $MINUTES-minute run with configs/empire-gpu.toml"
"$V" train --config configs/empire-gpu.toml --run "$OUT/run" --minutes "$MINUTES" --quiet | tee "$OUT/train.log"
echo "== figures"
tail -n 3 "$OUT/run/metrics.csv" | cut -d, -f1-5,12-13
if [ -f "$OUT/run/arena/elo.csv" ]; then cat "$OUT/run/arena/elo.csv"; fi
echo "gpu-check: done, log in $OUT/gpu-check.log"
exit
}
