#!/usr/bin/env bash
# Under --mpi pmix, ddl's own stop is not blamed on the ranks (issue 40,
# item 10): a --timeout first printed the worker's verdict on ddl's SIGTERM,
# "ddl: error: interrupted by SIGTERM while running the ranks", before ddl's
# "timed out". Now only ddl's line, exit 124, nothing left.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"

expect_exit 124 timeout -k 5 60 "$DDL" run --mpi pmix --np 2 --timeout 2s -- "$nap" 30
expect_contains "$t/err" "ddl: error: timed out after 2s"
expect_not_contains "$t/err" "interrupted by SIGTERM"
expect_none_left 3
echo "ok: a --timeout under --mpi pmix is said once, as ddl's"
