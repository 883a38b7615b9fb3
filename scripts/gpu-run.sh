#!/usr/bin/env bash
# The GPU measurement of issue 37, in one command, on a machine with an NVIDIA GPU and Python
# torch 2.11 (with CUDA) but no network and no cargo: the binaries come from
# scripts/gpu-bundle.sh (built on a CPU machine; carry `.gpu-bundle/bin` to the GPU machine).
#   bash scripts/gpu-run.sh [train minutes=4] [out dir=$OUT or runs/gpu-run-<date>]
# Dry run on a CPU machine: VZERO_TORCH_LIB=.gpu-bundle/site/torch/lib VZERO_GPU_RUN_DEVICE=cpu
# VZERO_GPU_RUN_GAMES=2 bash scripts/gpu-run.sh 0.3 /tmp/dry (every CUDA step then reports its error).
# Steps: the machine (nvidia-smi, CPU), the libraries the binaries resolve to, `--device auto`
# resolving to CUDA, network throughput (inference positions/s, training samples/s) on CUDA and
# on that machine's CPU for the default 4x32 and the -gpu profile's 10x128, then `vzero train`
# with configs/empire-gpu.toml (GPU utilisation sampled every second), then a short `vzero match`
# of the trained net against the CPU-trained nets/empire-m60-teacher. What comes back (at most
# 8 files): gpu-run.log (everything printed), results.tar.gz (metrics, ratings, utilisation,
# benchmark tables) and checkpoint.tar.gz (the run's final checkpoint).
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -uo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-3.5}
OUTDIR=${2:-${OUT:-runs/gpu-run-$(date +%Y%m%d-%H%M%S)}}
BIN=${VZERO_BUNDLE:-.gpu-bundle/bin}
PY=${PYTHON:-python3}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
W=$(mktemp -d)                     # work files; packed into $OUTDIR at the end
exec > >(tee "$OUTDIR/gpu-run.log") 2>&1
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*"; }
fail=0

stamp "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv || fail=1
echo "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
grep -o -m1 -w 'amx_bf16\|avx512_bf16\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
cat "$BIN/COMMIT" 2>/dev/null

stamp "LibTorch of this machine's Python"
# $VZERO_TORCH_LIB overrides (a dry run on a CPU machine: .gpu-bundle/site/torch/lib)
TL=${VZERO_TORCH_LIB:-$("$PY" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')} || { echo "error: no torch in $PY"; exit 1; }
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' || true
export LD_LIBRARY_PATH=$TL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VZERO_TORCH_CUDA_LIB=$TL/libtorch_cuda.so
ldd "$BIN/vzero-torch" | grep -E "torch|c10|not found"
V=$BIN/vzero

stamp "device auto"
"$BIN/nnbench" --variant empire --nets 4x32 --threads 1 --batches 32 --reps 1 --train-batch 0 --device auto 2>&1 | tee "$W/device.txt"
if grep -qi "cuda" "$W/device.txt"; then echo "device auto: CUDA"; else echo "error: --device auto did not resolve to CUDA"; fail=1; fi

if [ "${VZERO_GPU_RUN_SKIP_BENCH:-0}" != 1 ]; then
stamp "network throughput on CUDA: inference positions/s (GFLOP/s), training samples/s"
"$BIN/nnbench" --variant empire --device cuda --nets 4x32,10x128 --threads 1 --batches 32,256,1024,4096 --train-batch 1024 --reps 3 2>&1 | tee "$W/nn-cuda.txt"
stamp "CUDA: f32 against bf16 inference (10x128)"
"$BIN/nnbench" --variant empire --device cuda --nets 10x128 --threads 1 --batches 256,1024 --train-batch 0 --reps 3 --compare 2>&1 | tee "$W/nn-cuda-compare.txt"
stamp "CUDA: the learner (window sampling and all) against the bare step, and bf16 training"
"$BIN/learnbench" 1024 20 10x128 4 empire - cuda 2>&1 | tee "$W/learn-cuda.txt"
stamp "network throughput on this machine's CPU ($(nproc) cores)"
"$BIN/nnbench" --variant empire --device cpu --nets 4x32,10x128 --threads 1,"$(nproc)" --batches 32,256 --train-batch 256 --reps 3 2>&1 | tee "$W/nn-cpu.txt"

fi
# Issue 47: self-play with each worker's own network against one evaluation server per process
# (every worker's leaves in one forward pass). 14 workers is the profile; 28 gives the server
# more leaves in flight. Moves/s, positions per forward pass, mean GPU utilisation per setting;
# the training below uses the fastest (VZERO_GPU_RUN_EVALUATOR=per-worker:14 forces one).
EVAL_SECS=${VZERO_GPU_RUN_EVAL_SECONDS:-40}
best=${VZERO_GPU_RUN_EVALUATOR:-}
if [ -z "$best" ]; then
  stamp "self-play evaluators: per-worker networks against one shared evaluation server (configs/empire-gpu.toml, $EVAL_SECS s each)"
  best=per-worker:14; best_rate=0
  for spec in per-worker:14 shared:14 shared:28; do
    mode=${spec%%:*}; workers=${spec##*:}
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -l 1 > "$W/util-$mode-$workers.csv" 2>/dev/null &
    smi=$!
    "$V" bench selfplay --config configs/empire-gpu.toml --device "${VZERO_GPU_RUN_DEVICE:-cuda}" --no-single \
      --evaluator "$mode" --workers "$workers" --runs 1 --seconds "$EVAL_SECS" 2>&1 | tee "$W/eval-$mode-$workers.txt"
    kill $smi 2>/dev/null
    util=$(awk '$1+0==$1 {n++; s+=$1} END {if (n) printf "%.1f", s/n; else printf "n/a"}' "$W/util-$mode-$workers.csv")
    rate=$(grep '^selfplay' "$W/eval-$mode-$workers.txt" | grep -o '[0-9]* moves/s' | head -n 1 | cut -d' ' -f1)
    ppf=$(grep '^selfplay' "$W/eval-$mode-$workers.txt" | grep -o '[0-9.]* positions per forward' | head -n 1 | cut -d' ' -f1)
    echo "evaluator $mode, $workers workers: ${rate:-?} moves/s, ${ppf:-?} positions per forward pass, mean GPU utilisation $util%" | tee -a "$W/evaluators.txt"
    if [ -n "$rate" ] && [ "$rate" -gt "$best_rate" ]; then best=$spec; best_rate=$rate; fi
  done
  echo "fastest: $best ($best_rate moves/s); issue 47's goal: GPU busy >= 85% and >= 4,800 moves/s (3x docs/gpu.md's run 2)" | tee -a "$W/evaluators.txt"
fi
stamp "vzero train, configs/empire-gpu.toml with the $best evaluator, $MINUTES minutes (no teacher: no Fairy-Stockfish here)"
nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used,power.draw --format=csv,nounits -l 1 > "$W/gpu-util.csv" 2>&1 &
smi=$!
top -b -d 5 -n 60 | grep -E "^%Cpu|^MiB Mem" > "$W/cpu-util.txt" 2>&1 &
topp=$!
# the profile as it is, but a gauntlet every generation (a few minutes make few generations)
sed -e 's/^every = [0-9]*  /every = 1  /' -e "s/^publish_every = [0-9]*/publish_every = ${VZERO_GPU_RUN_PUBLISH:-100}/" \
    -e "s/^workers = [0-9]* /workers = ${best##*:} /" -e "s/^evaluator = \"[a-z-]*\"/evaluator = \"${best%%:*}\"/" configs/empire-gpu.toml > "$W/empire-gpu.toml"
grep -E '^(every|publish_every|workers|evaluator|games_per_worker|full_sims|cheap_sims|min_rows) ' "$W/empire-gpu.toml"
"$V" train --config "$W/empire-gpu.toml" --run "$W/run" --minutes "$MINUTES" --teacher off ${VZERO_GPU_RUN_DEVICE:+--device "$VZERO_GPU_RUN_DEVICE"} --quiet 2>&1 | tee "$W/train.log"
kill $smi $topp 2>/dev/null
grep -q "learner device: Cuda" "$W/train.log" || { echo "error: the learner did not run on CUDA"; fail=1; }
stamp "GPU utilisation during training (percent of samples; nvidia-smi every second)"
awk -F', ' 'NR>1 && $2+0==$2 {n++; s+=$2; m+=$4; if ($2>mx) mx=$2} END {if (n) printf "samples %d, mean GPU utilisation %.1f%%, max %d%%, mean memory used %.0f MiB\n", n, s/n, mx, m/n}' "$W/gpu-util.csv"
stamp "learner metrics (first and last rows)"
head -n 1 "$W/run/metrics.csv"; tail -n 3 "$W/run/metrics.csv"
[ -f "$W/run/arena/elo.csv" ] && cat "$W/run/arena/elo.csv"

stamp "vzero match: the trained net against nets/empire-m60-teacher (CPU-trained 60 min), 64 sims"
last=$(ls "$W"/run/checkpoints/gen-*.json 2>/dev/null | tail -n 1)
m60=$(ls nets/empire-m60-teacher/gen-*.json | tail -n 1)
if [ -n "$last" ]; then
  "$V" match "net:$last:64" "net:$m60:64" --variant empire --games "${VZERO_GPU_RUN_GAMES:-20}" --concurrency "$(nproc)" --no-progress 2>&1 | tee "$W/match.txt"
else
  echo "error: no checkpoint in the run"; fail=1
fi

stamp "packing"
(cd "$W" && cp run/metrics.csv . 2>/dev/null; cp run/arena/elo.csv . 2>/dev/null; cp run/config.toml run-config.toml 2>/dev/null
 tar -czf "$OUTDIR/results.tar.gz" --exclude=run ./*)
if [ -n "$last" ]; then
  tar -czf "$OUTDIR/checkpoint.tar.gz" -C "$(dirname "$last")" "$(basename "$last")" "$(basename "${last%.json}").safetensors"
fi
ls -la "$OUTDIR"
stamp "done (fail=$fail)"
exit $fail
exit
}
