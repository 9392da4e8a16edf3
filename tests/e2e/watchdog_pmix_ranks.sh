#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hang watchdog under --mpi pmix watches and names MPI ranks, not the
# hosts' workers (issue 41, item 2): an MPI C program whose rank 1 of 4
# sleeps before MPI_Barrier stalls (exit 5), gdb dumps every rank, and the
# report names the 4 MPI ranks stalled, rank 1 the suspect in its sleep and
# the others grouped in the barrier, each rank with its own last line and
# stack dump; --json's summary says the same. Before: "stalled rank: 0" (the
# one host), no suspect. On two hosts of the list (both this machine), the
# suspect's host is its own.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
have gdb gdb || exit 0
export TMPDIR=$t/tmp
mkdir "$TMPDIR"
cat >"$t/barrier.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("rank %d before the barrier\n", rank);
  fflush(stdout);
  if (rank == 1) sleep(600);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
C
mpicc -g -O0 -o "$t/barrier-$marker" "$t/barrier.c"
cat >"$t/stall.toml" <<TOML
[job]
grace = "1s"
[watchdog]
stall = "2s"
dump_timeout = "30s"
TOML

expect_exit 5 timeout -k 5 90 "$DDL" run "$t/stall.toml" --mpi pmix --np 4 "$t/barrier-$marker"
expect_contains "$t/err" "ddl: error: stalled ranks: 0-3"
grep -qE "^ddl: suspect: rank 1 on localhost: in .*(sleep|nanosleep)" "$t/err" ||
  { cat "$t/err"; fail "MPI rank 1 is not named the suspect"; }
grep -qE "^ddl: ranks 0,2-3: in .*PMPI_Barrier" "$t/err" || { cat "$t/err"; fail "ranks 0,2-3 not grouped in the barrier"; }
for r in 0 1 2 3; do
  expect_contains "$t/err" "ddl: rank $r on localhost: last line: rank $r before the barrier"
  grep -qE "^ddl: stack dump of rank $r \([0-9]+ lines\):" "$t/err" || fail "no stack dump of MPI rank $r"
done
grep -qE "^  \[1\] #[0-9]+ .* main \(.*\) at .*barrier.c:10" "$t/err" || { cat "$t/err"; fail "rank 1's dump is not its own"; }
expect_not_contains "$t/err" "stalled rank: 0"
expect_none_left 3

expect_exit 5 timeout -k 5 90 "$DDL" run "$t/stall.toml" --mpi pmix -H 127.0.0.1:2,localhost:2 --np 4 --json \
  "$t/barrier-$marker"
python3 - "$t/out" <<'PY' || { cat "$t/out"; fail "the JSON summary does not name MPI rank 1 on its host"; }
import json, sys
summary = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "summary"][0]
assert summary["stalled_ranks"] == [0, 1, 2, 3], summary
groups = summary["stall_groups"]
assert groups[0]["suspect"] and groups[0]["ranks"] == [1] and groups[0]["host"] == "127.0.0.1", groups
assert groups[-1]["ranks"] == [0, 2, 3] and not groups[-1]["suspect"], groups
PY
expect_none_left 3
