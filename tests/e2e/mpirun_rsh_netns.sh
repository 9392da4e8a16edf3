#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mpirun with `ddl rsh` as its rsh agent reaches network-namespace hosts over
# ddl's own SSH (libssh, host keys checked) and runs a real MPI allreduce.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
netns_up 2
mpicc -O1 -o "$t/allreduce" "$DDL_SOURCE_DIR/tests/fixtures/mpi/allreduce.c"
printf '%s slots=2\n' "${NETNS_ADDRS[@]}" >"$t/hostfile"

expect_exit 0 timeout -k 5 60 ip netns exec "$NETNS_CLIENT" env DDL_RSH_TRANSPORT=ssh \
  DDL_RSH_JOB="$NETNS_DIR/ssh.toml" mpirun --allow-run-as-root --hostfile "$t/hostfile" -np 4 \
  --mca plm_rsh_agent "$DDL rsh" --mca plm_rsh_no_tree_spawn 1 --mca orte_leave_session_attached 1 \
  --mca btl_tcp_if_include "$NETNS_NET.0/24" --mca oob_tcp_if_include "$NETNS_NET.0/24" "$t/allreduce"
for r in 0 1; do expect_contains "$t/out" "rank $r/4 on h1: sum 10 wrong 0"; done
for r in 2 3; do expect_contains "$t/out" "rank $r/4 on h2: sum 10 wrong 0"; done

# A host that does not answer: the agent says so and exits 3, which mpirun passes on.
printf '%s slots=1\n' "$NETNS_NET.77" >"$t/badhosts"
expect_exit 3 timeout -k 5 60 ip netns exec "$NETNS_CLIENT" env DDL_RSH_TRANSPORT=ssh \
  DDL_RSH_JOB="$NETNS_DIR/ssh.toml" mpirun --allow-run-as-root --hostfile "$t/badhosts" -np 1 \
  --mca plm_rsh_agent "$DDL rsh" --mca plm_rsh_no_tree_spawn 1 --mca orte_leave_session_attached 1 "$t/allreduce"
expect_contains "$t/err" "$NETNS_NET.77: cannot connect"
echo PASS
