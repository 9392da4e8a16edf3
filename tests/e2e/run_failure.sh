#!/usr/bin/env bash
# Gang failure: the first failing rank's code (or 128+signal) is ddl's, the
# summary names it, and no process of any rank is left; a rank that traps
# TERM gets KILL after grace.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

# Rank 2 fails with 3; the others wait in a grandchild (not exec'd).
start=$SECONDS
expect_exit 3 timeout -k 5 30 "$DDL" run --np 4 -- sh -c \
  "if [ \$DDL_RANK = 2 ]; then sleep 0.3; echo 'first line' >&2; echo 'it broke' >&2; exit 3; fi; $nap 60; true"
(( SECONDS - start < 10 )) || fail "the gang took too long to stop"
expect_contains "$t/err" "ddl: error: rank 2 on localhost exited with code 3 after"
expect_contains "$t/err" "ddl: last 2 stderr lines of rank 2:"
expect_contains "$t/err" "  [2] it broke"
expect_none_left 2

# A rank killed by a signal: 128+N and the signal's name.
expect_exit 137 timeout -k 5 30 "$DDL" run --np 3 -- sh -c \
  "if [ \$DDL_RANK = 1 ]; then sleep 0.2; kill -KILL \$\$; fi; $nap 60; true"
expect_contains "$t/err" "rank 1 on localhost was killed by SIGKILL"
expect_none_left 2
expect_exit 139 timeout -k 5 30 "$DDL" run --np 2 -- sh -c "kill -SEGV \$\$"
expect_contains "$t/err" "SIGSEGV"

# A rank that ignores TERM is killed after grace (job file: grace = 1s).
cat >"$t/job.toml" <<TOML
[job]
grace = "1s"
TOML
start=$(date +%s%N)
expect_exit 4 timeout -k 5 30 "$DDL" run "$t/job.toml" --np 2 -- sh -c \
  "if [ \$DDL_RANK = 0 ]; then sleep 0.3; exit 4; fi; trap '' TERM; while :; do $nap 0.1; done"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
(( ms >= 1200 && ms < 6000 )) || fail "TERM-trapping rank ended after ${ms}ms, not after grace"
expect_none_left 2
