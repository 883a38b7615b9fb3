#!/usr/bin/env bash
# Builds, on this (CPU) machine, a vzero for a GPU machine that has no network and no cargo but
# has its own Python torch 2.11 with CUDA (the workplace's H200 machine; issue 37):
#   scripts/gpu-bundle.sh           -> .gpu-bundle/bin/{vzero,vzero-torch,nnbench,learnbench}
#   scripts/gpu-bundle.sh --check   -> also runs the bundle here on the CPU (vzero bench, a
#                                      1-minute train with the -gpu profile, a match), against
#                                      the same torch 2.11 libraries it will find there
# Then, on the GPU machine: `bash scripts/gpu-run.sh` (it finds that machine's torch, loads its
# libtorch_cuda.so at start and measures; see the script), carrying `.gpu-bundle/bin`.
#
# How: vzero pins tch 0.26 (LibTorch 2.13); tch 0.24 is the same API for LibTorch 2.11. The
# script copies the working tree to .gpu-bundle/src, pins tch/torch-sys 0.24.0 there, and builds
# it against PyPI's torch 2.11.0 wheel (the same build, '2.11.0+cu130', as that machine's) laid
# out like scripts/setup.sh's cpu flavour in .gpu-bundle/site: the CUDA libraries pruned, so the
# binaries link LibTorch's CPU part only and load its CUDA part at run time
# (vzero_model::device::load_cuda_backend). The binaries are stripped (about 20 MB together).
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=$ROOT/.gpu-bundle
TORCH_VERSION=2.11.0    # the GPU machine's torch; tch 0.24.0 is its binding
TCH_VERSION=0.24.0
CUDA_LIBS="nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85"  # libtorch_cpu.so's NEEDED
CHECK=0
[ "${1:-}" = --check ] && CHECK=1

bash scripts/setup.sh >/dev/null   # .venv: cmake and python for the steps below
mkdir -p "$B"

# 1. LibTorch 2.11 (CPU part) in .gpu-bundle/site, like setup.sh's cpu flavour.
stamp=$B/site/.torch-$TORCH_VERSION
if [ ! -e "$stamp" ]; then
  echo "gpu-bundle: torch $TORCH_VERSION (CPU part) into $B/site ..." >&2
  rm -rf "$B/site"
  # shellcheck disable=SC2086
  .venv/bin/python -m pip install --disable-pip-version-check --no-cache-dir -q --no-deps \
    --target "$B/site" "torch==$TORCH_VERSION" $CUDA_LIBS
  got=$(sed -n "s/^__version__ = '\([^'+]*\).*/\1/p" "$B/site/torch/version.py" | head -n1)
  [ "$got" = "$TORCH_VERSION" ] || { echo "gpu-bundle: got torch '$got', expected $TORCH_VERSION" >&2; exit 1; }
  rm -f "$B"/site/torch/lib/libtorch_cuda*.so "$B"/site/torch/lib/libc10_cuda.so \
        "$B"/site/torch/lib/libtorch_nvshmem.so "$B"/site/torch/lib/libcaffe2_nvrtc.so \
        "$B"/site/torch/lib/libtorch_python.so
  touch "$stamp"
fi
LT=$B/site/torch

# 2. The working tree (tracked and untracked, not ignored files) in .gpu-bundle/src, tch 0.24.
# Unpacked to a staging folder first; only files whose contents differ are copied over (with a
# new modification time), so cargo rebuilds exactly what changed since the last bundle.
echo "gpu-bundle: copying the working tree to $B/src (tch $TCH_VERSION) ..." >&2
stage=$B/stage
rm -rf "$stage"; mkdir -p "$stage" "$B/src"
git ls-files -z -co --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$stage"
sed -i -E "s/^(tch|torch-sys) = \"=[0-9.]+\"/\1 = \"=$TCH_VERSION\"/" "$stage/Cargo.toml"
grep -q "^tch = \"=$TCH_VERSION\"" "$stage/Cargo.toml" || { echo "gpu-bundle: could not pin tch in Cargo.toml" >&2; exit 1; }
# The copy's lock starts from the project's: only tch and torch-sys move (cargo re-locks them).
changed=0
while IFS= read -r -d '' f; do
  if ! cmp -s "$stage/$f" "$B/src/$f"; then
    mkdir -p "$(dirname "$B/src/$f")"; cp "$stage/$f" "$B/src/$f"; changed=$((changed + 1))
  fi
done < <(cd "$stage" && find . -type f -print0)
# files gone from the working tree go from the copy too (target and the lock cargo rewrote stay)
while IFS= read -r -d '' f; do
  [ -e "$stage/$f" ] || rm -f "$B/src/$f"
done < <(cd "$B/src" && find . -type f -print0)
rm -rf "$stage"
echo "gpu-bundle: $changed file(s) changed since the last bundle" >&2

# 3. Build (its own target dir, kept between runs: a rebuild after a change is incremental).
echo "gpu-bundle: building (release) ..." >&2
(
  cd "$B/src"
  export LIBTORCH=$LT LIBTORCH_BYPASS_VERSION_CHECK=1 CMAKE=$ROOT/.venv/bin/cmake CARGO_TARGET_DIR=$B/target
  cargo build --release -p vzero
  cargo build --release -p vzero-model --example nnbench
  cargo build --release -p vzero-trainer --example learnbench
)
mkdir -p "$B/bin"
for f in vzero vzero-torch examples/nnbench examples/learnbench; do
  cp "$B/target/release/$f" "$B/bin/$(basename "$f").tmp"
  strip "$B/bin/$(basename "$f").tmp"
  mv "$B/bin/$(basename "$f").tmp" "$B/bin/$(basename "$f")"
done
git rev-parse HEAD > "$B/bin/COMMIT"
git status --porcelain | grep -q . && echo "+ uncommitted changes" >> "$B/bin/COMMIT"
echo "gpu-bundle: $B/bin ($(du -sh "$B/bin" | cut -f1)): $(ls "$B/bin" | tr '\n' ' ')" >&2

# 4. --check: the bundle on this machine's CPU against the same LibTorch 2.11 libraries.
if [ $CHECK = 1 ]; then
  export LD_LIBRARY_PATH=$LT/lib:$B/site/nvidia/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  out=$B/check
  rm -rf "$out"; mkdir -p "$out"
  echo "gpu-bundle: --check on the CPU: libraries" >&2
  ldd "$B/bin/vzero-torch" | grep -E "torch|c10" | tee "$out/ldd.txt"
  if grep -q "not found" "$out/ldd.txt"; then echo "gpu-bundle: a library is not found" >&2; exit 1; fi
  if ! grep -q "$LT/lib/libtorch_cpu.so" "$out/ldd.txt"; then
    echo "gpu-bundle: vzero-torch does not resolve to $LT/lib (torch $TORCH_VERSION)" >&2; exit 1
  fi
  "$B/bin/vzero" --version
  "$B/bin/nnbench" --variant empire --nets 4x32 --threads 1 --batches 32 --reps 2 --train-batch 64 --device auto
  "$B/bin/vzero" train --variant empire --config configs/empire-gpu.toml --device cpu --teacher off \
    --run "$out/run" --minutes 1 --quiet 2>&1 | tee "$out/train.log"
  grep -q "learner device: Cpu" "$out/train.log" || { echo "gpu-bundle: no learner device line" >&2; exit 1; }
  ls "$out/run/checkpoints" | tail -n 2
  echo "gpu-bundle: --check ok" >&2
fi
exit
}
