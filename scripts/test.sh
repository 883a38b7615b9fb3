#!/usr/bin/env bash
# Installs what is missing, then runs every test of the workspace.
# Usage: scripts/test.sh [extra cargo test args]
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null; then
  echo "error: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
if [ ! -d ../shared/oracle ]; then
  echo "error: ../shared/oracle not found beside the repository (the oracle tests read it)" >&2
  exit 1
fi
if [ -x scripts/setup.sh ]; then
  bash scripts/setup.sh
fi
# Every stage runs even after one fails, and so does every test binary (--no-fail-fast): one run
# shows everything that is broken. The last lines count the tests (the cargo tests and the four
# script checks below) and name every one that failed.
log=$(mktemp "${TMPDIR:-/tmp}/vzero-test.XXXXXX")
trap 'rm -f "$log"' EXIT
failed=()      # names of what failed: crate binary::test, or a script check
extra_pass=0   # script checks that passed
set +e
cargo test --workspace --release --locked --no-fail-fast "$@" 2>&1 | tee "$log"
cargo_rc=${PIPESTATUS[0]}
set -e
# The tests passed and every failure by name (scripts/test-failures.sh reads cargo's output).
passed=0
failed_count=0
while IFS= read -r line; do
  case "$line" in
    "passed "*) passed=${line#passed } ;;
    "failed "*) failed+=("${line#failed }"); failed_count=$((failed_count + 1)) ;;
  esac
done < <(bash scripts/test-failures.sh "$log")
if [ "$cargo_rc" != 0 ] && [ "$failed_count" = 0 ]; then
  failed+=("cargo test (exit $cargo_rc with no failed test named: see above)"); failed_count=1
fi
# check NAME CMD...: runs one script check, counting it as passed or failed.
check() {
  local name=$1; shift
  if "$@"; then extra_pass=$((extra_pass + 1)); else failed+=("$name"); failed_count=$((failed_count + 1)); fi
}
# The rules against Fairy-Stockfish's own code: seeded random games of empire and shogun played by
# pyffish (installed into .venv by setup.sh) and replayed by the release binary, position by
# position (scripts/fsf_diff.py; about a minute on 2 cores). VZERO_SKIP_FSF=1 skips it.
if [ "${VZERO_SKIP_FSF:-0}" != 1 ]; then
  if [ ! -x target/release/vzero ]; then
    cargo build --release --locked -p vzero --bin vzero || true
  fi
  check "scripts/fsf_diff.py (vzero's rules against pyffish's games)" \
    .venv/bin/python scripts/fsf_diff.py --vzero target/release/vzero
  # The engine itself (scripts/fairy-stockfish: Fairy-Stockfish's UCI loop from the pyffish wheel,
  # vzero's default teacher) against the oracle: every perft row of ../shared/oracle up to 2,000,000
  # nodes, empire and shogun, with vzero's definitions (scripts/fsf/variants.ini); ~10 s.
  check "scripts/fsf_perft.py (Fairy-Stockfish of .venv does not count the oracle's perft, ../shared/oracle/*-perft.csv)" \
    .venv/bin/python scripts/fsf_perft.py --fsf scripts/fairy-stockfish --ini scripts/fsf/variants.ini
else
  echo "test.sh: VZERO_SKIP_FSF=1: the Fairy-Stockfish differential test (scripts/fsf_diff.py) and perft check (scripts/fsf_perft.py) are skipped" >&2
fi
# The deployment recipes (deploy/): every Kubernetes manifest of deploy/k8s/ against the pinned
# Kubernetes version's schemas (kubernetes-validate, strict, offline), the references and resources
# its pods need, and hadolint on deploy/Dockerfile (scripts/k8s_validate.py; under a second). The
# Slurm scripts have a test of their own on a real Slurm: scripts/slurm-test.sh (README, "Many
# machines").
check "scripts/k8s_validate.py (deploy/k8s manifests, deploy/Dockerfile)" \
  .venv/bin/python scripts/k8s_validate.py
# Faults together (docs/reliability.md): processes SIGKILLed, a second learner, a paused and a
# failing S3 server, a full disk, with `vzero check` after each; the short form, ~4 minutes.
# VZERO_SKIP_CHAOS=1 skips it.
if [ "${VZERO_SKIP_CHAOS:-0}" != 1 ]; then
  check "scripts/chaos.sh --short (faults together)" bash scripts/chaos.sh --short
else
  echo "test.sh: VZERO_SKIP_CHAOS=1: the fault test (scripts/chaos.sh --short) is skipped" >&2
fi
# The pages of `vzero serve` in a real browser: headless Chromium through Selenium plays spqr,
# shogun and empire games by clicks and drags, and opens the analyse, openings and run pages
# (scripts/browser-test.sh installs chromium, chromium-driver and selenium when missing; about
# 1.5 minutes on 2 cores). VZERO_SKIP_BROWSER=1 skips it.
if [ "${VZERO_SKIP_BROWSER:-0}" != 1 ]; then
  check "scripts/browser-test.sh (vzero serve in headless Chromium)" bash scripts/browser-test.sh
else
  echo "test.sh: VZERO_SKIP_BROWSER=1: the browser test (scripts/browser-test.sh) is skipped" >&2
fi
echo "test.sh: $((passed + extra_pass)) passed, $failed_count failed"
if [ "${#failed[@]}" -gt 0 ]; then
  joined=$(printf '%s; ' "${failed[@]}")
  echo "test.sh: FAILED: ${joined%; }"
  exit 1
fi
exit
}
