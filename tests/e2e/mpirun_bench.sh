#!/usr/bin/env bash
# `ddl bench allreduce --transport mpi` through the mpirun backend: the whole
# nccl-tests table comes back, every #wrong is 0.
source "$(dirname "$0")/common.inc"
command -v mpirun >/dev/null || skip "mpirun not installed"

expect_exit 0 timeout -k 5 120 "$DDL" bench allreduce --backend mpirun --np 2 --transport mpi -b 8 -e 64
expect_contains "$t/out" "# Avg bus bandwidth"
expect_contains "$t/out" "# Collective test concluded: all_reduce_perf"
rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +float +sum' "$t/out")
[[ $rows == 4 ]] || fail "expected 4 size rows (8..64 B), got $rows"
awk '/^ +[0-9]+ +[0-9]+ +float/ { if ($9 != 0 || $13 != 0) bad = 1 } END { exit bad }' "$t/out" ||
  fail "a row has wrong elements"
