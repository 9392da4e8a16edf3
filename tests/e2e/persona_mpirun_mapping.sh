#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mpirun's mapping in ddl's plan (issue 41): --map-by node and --rank-by node
# deal the ranks over the hosts (rank r on host r mod H while every host has
# room), -npernode N puts N on every host, --oversubscribe shares out ranks
# beyond the slots; the plan (--dry-run) says so, and under the mpirun backend
# mpirun numbers them the same (real runs: 3 ranks on one slot here, and 4
# ranks dealt over 2 namespace hosts). Refused: seq, rankfile, span.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
cd "$t"
printf 'h1 slots=4\nh2 slots=4\n' >hosts
mpi() { timeout -k 5 60 "$DDL" mpirun "$@"; }
# plan_is "R:HOST ...": the dry run's plan table puts each rank there.
plan_is() {
  local want=$1 got
  got=$(awk '/^RANK +HOST/ { on = 1; next } on && NF == 0 { exit } on { printf "%s%s:%s", sep, $1, $2; sep = " " }' "$t/out")
  [[ $got == "$want" ]] || { cat "$t/out"; fail "plan: got '$got', want '$want'"; }
}

expect_exit 0 mpi -np 2 --map-by node -hostfile hosts --dry-run ./prog
plan_is "0:h1 1:h2"
expect_exit 0 mpi -np 5 --map-by node -hostfile hosts --dry-run ./prog
plan_is "0:h1 1:h2 2:h1 3:h2 4:h1"
grep -A1 -- "--map-by" "$t/out" | grep -q "node" || fail "mpirun is not given --map-by node"
expect_exit 0 mpi -np 3 --rank-by node -hostfile hosts --dry-run ./prog
plan_is "0:h1 1:h2 2:h1"
expect_exit 0 mpi -np 2 --map-by slot -hostfile hosts --dry-run ./prog
plan_is "0:h1 1:h1"
expect_exit 0 mpi -npernode 1 -hostfile hosts --dry-run ./prog
plan_is "0:h1 1:h2"
expect_exit 0 mpi --npernode 2 --map-by node -hostfile hosts --dry-run ./prog
plan_is "0:h1 1:h2 2:h1 3:h2"
expect_exit 0 mpi -np 5 --oversubscribe -H h1:1,h2:1 --dry-run ./prog
plan_is "0:h1 1:h1 2:h1 3:h2 4:h2"
expect_exit 2 mpi -np 3 -H h1:1 --dry-run ./prog
expect_exit 2 mpi -np 2 --map-by seq -hostfile hosts --dry-run ./prog
expect_contains "$t/err" "--map-by seq: is not in ddl's plan"

# Real runs: three ranks on one slot; four dealt over two hosts.
expect_exit 0 mpi --oversubscribe -np 3 -H localhost:1 sh -c 'echo "mpi $OMPI_COMM_WORLD_RANK ddl $DDL_RANK"'
for r in 0 1 2; do expect_contains "$t/out" "[$r] mpi $r ddl $r"; done
netns_up 2
a=("${NETNS_ADDRS[@]}")
DDL_TIMEOUT=90 expect_exit 0 ddl_ssh mpirun -F "$NETNS_DIR/ssh_config" -np 4 --map-by node -H "${a[0]}:2,${a[1]}:2" \
  sh -c 'echo "mpi $OMPI_COMM_WORLD_RANK ddl $DDL_RANK on $(hostname) planned $DDL_HOST"'
expect_contains "$t/out" "[0] mpi 0 ddl 0 on h1 planned ${a[0]}"
expect_contains "$t/out" "[1] mpi 1 ddl 1 on h2 planned ${a[1]}"
expect_contains "$t/out" "[2] mpi 2 ddl 2 on h1 planned ${a[0]}"
expect_contains "$t/out" "[3] mpi 3 ddl 3 on h2 planned ${a[1]}"
echo PASS
