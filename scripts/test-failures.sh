#!/usr/bin/env bash
# Reads the output of `cargo test --no-fail-fast` (a file) and prints what scripts/test.sh sums
# up: a first line `passed N` (tests passed over every binary), then one line `failed NAME` per
# failure: a failed test as BINARY::TEST (the binary's deps name less its hash, or `CRATE (doc)`
# for doc tests), a binary that ended without its `test result:` line and without a failed test
# (it crashed or was killed) as `BINARY (ended without a test result: crashed or killed)`.
# Usage: scripts/test-failures.sh LOG
{ # the whole script is read before it runs: editing it (or a git pull) during a run changes nothing
set -euo pipefail
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
  echo "usage: scripts/test-failures.sh LOG (a readable file of cargo test's output)" >&2
  exit 2
fi
awk '
  function close_section() { if (open && !had_result && !had_fail) failures[++n] = bin " (ended without a test result: crashed or killed)"; open = 0 }
  /^ *Running / { close_section(); bin = $NF; gsub(/^\(|\)$/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin); open = 1; had_result = 0; had_fail = 0 }
  /^ *Doc-tests / { close_section(); bin = $2 " (doc)"; open = 1; had_result = 0; had_fail = 0 }
  /^test .* \.\.\. FAILED$/ { t = $0; sub(/^test /, "", t); sub(/ \.\.\. FAILED$/, "", t); failures[++n] = bin "::" t; had_fail = 1 }
  /^test result: / { had_result = 1; for (i = 2; i <= NF; i++) if ($(i) ~ /^passed;?$/) passed += $(i - 1) }
  END {
    close_section()
    print "passed " passed + 0
    for (i = 1; i <= n; i++) print "failed " failures[i]
  }' "$1"
exit
}
