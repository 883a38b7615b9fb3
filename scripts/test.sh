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
cargo test --workspace --release --locked "$@"
# The rules against Fairy-Stockfish's own code: seeded random games of empire and shogun played by
# pyffish (installed into .venv by setup.sh) and replayed by the release binary, position by
# position (scripts/fsf_diff.py; about a minute on 2 cores). VZERO_SKIP_FSF=1 skips it.
if [ "${VZERO_SKIP_FSF:-0}" != 1 ]; then
  if [ ! -x target/release/vzero ]; then
    cargo build --release --locked -p vzero --bin vzero
  fi
  .venv/bin/python scripts/fsf_diff.py --vzero target/release/vzero
  # The engine itself (scripts/fairy-stockfish: Fairy-Stockfish's UCI loop from the pyffish wheel,
  # vzero's default teacher) against the oracle: every perft row of ../shared/oracle up to 2,000,000
  # nodes, empire and shogun, with vzero's definitions (scripts/fsf/variants.ini); ~10 s.
  if ! .venv/bin/python scripts/fsf_perft.py --fsf scripts/fairy-stockfish --ini scripts/fsf/variants.ini; then
    echo "test.sh: FAILED: Fairy-Stockfish (scripts/fairy-stockfish, pyffish from .venv) does not count the oracle's perft (../shared/oracle/*-perft.csv): see the lines above" >&2
    exit 1
  fi
else
  echo "test.sh: VZERO_SKIP_FSF=1: the Fairy-Stockfish differential test (scripts/fsf_diff.py) and perft check (scripts/fsf_perft.py) are skipped" >&2
fi
# Faults together (docs/reliability.md): processes SIGKILLed, a second learner, a paused and a
# failing S3 server, a full disk, with `vzero check` after each; the short form, ~4 minutes.
# VZERO_SKIP_CHAOS=1 skips it.
if [ "${VZERO_SKIP_CHAOS:-0}" != 1 ]; then
  bash scripts/chaos.sh --short
else
  echo "test.sh: VZERO_SKIP_CHAOS=1: the fault test (scripts/chaos.sh --short) is skipped" >&2
fi
exit
}
