#!/usr/bin/env bash
# The real-browser test of `vzero serve` (issue 46): installs what is missing (scripts/setup.sh
# --browser: Debian's chromium and chromium-driver, selenium pinned in .venv), builds the release
# binary (skipped with VZERO_SKIP_BUILD=1), then runs scripts/browser_test.py: it trains a small
# run, starts a second run in the background and `vzero serve --port 0`, and plays, explores and
# watches them in headless Chromium (1280x900). About 2-3 minutes on 2 cores.
#
#   OUT_DIR=target/browser-test   screenshots (play, analyse, openings, run), PGNs and logs
#   extra arguments go to browser_test.py (--keep keeps the temporary run directories)
#
# The last line is `browser_test: N passed, M failed`; the exit status is non-zero on a failure.
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the browser test needs: the other blocks of setup.sh (moto, deployment checks,
# pyffish, .venv-py) are skipped here; scripts/test.sh installs them.
VZERO_SKIP_S3=1 VZERO_SKIP_DEPLOY=1 VZERO_SKIP_FSF=1 VZERO_SKIP_PYTHON=1 bash scripts/setup.sh --browser
if [ "${VZERO_SKIP_BUILD:-0}" != 1 ]; then
  if ! command -v cargo >/dev/null; then
    echo "browser-test.sh: cargo not found; install Rust (https://rustup.rs) or set VZERO_SKIP_BUILD=1 with target/release/vzero built" >&2
    exit 1
  fi
  cargo build --release --locked -p vzero --bin vzero
fi
if [ ! -x target/release/vzero ]; then
  echo "browser-test.sh: target/release/vzero is missing (cargo build --release -p vzero --bin vzero)" >&2
  exit 1
fi
export OUT_DIR=${OUT_DIR:-target/browser-test}
# Selenium Manager must not download anything: the test names /usr/bin/chromedriver itself.
export SE_OFFLINE=true
.venv/bin/python scripts/browser_test.py --vzero target/release/vzero --out "$OUT_DIR" "$@"
exit
}
