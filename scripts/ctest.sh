#!/usr/bin/env bash
# ctest in BUILD_DIR with ARGS. ctest counts a skipped test (exit 77) as
# "Not Run" and still exits 0; under CI (CI=true: every package of
# scripts/deps.sh installed, root) nothing may skip, so any test that did not
# run fails the run, and they are listed.
# Usage: scripts/ctest.sh BUILD_DIR [CTEST_ARGS...]
set -euo pipefail
dir=$1; shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
(cd "$dir" && ctest "$@") | tee "$log" || rc=$?
if [[ ${CI:-} == true ]] && grep -q "^The following tests did not run:" "$log"; then
  echo "ddl CI: every test must run here (CI=true); these did not:" >&2
  sed -n '/^The following tests did not run:/,/^[^[:space:]]/{/^[[:space:]]/p}' "$log" >&2
  rc=1
fi
exit $rc
