#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One ssh configuration for every way ddl reaches a host (issue 41): `ddl
# mpirun -F CFG` reaches the namespace hosts through mpirun's rsh agent (`ddl
# rsh`) with CFG's keys and known hosts, as ddl's own ssh does; so does `ddl
# run --backend mpirun -F CFG`, with a relative path. No job file names them.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
netns_up 2
a=("${NETNS_ADDRS[@]}")
mpicc -O1 -o "$t/ring_c" "$DDL_SOURCE_DIR/tests/fixtures/mpi/ring.c"
cd "$t"

DDL_TIMEOUT=90 expect_exit 0 ddl_ssh mpirun -F "$NETNS_DIR/ssh_config" -np 2 -H "${a[0]},${a[1]}" "$t/ring_c"
expect_contains "$t/out" "[0] process 0 of 2 on h1"
expect_contains "$t/out" "[1] process 1 of 2 on h2"
expect_not_contains "$t/err" "host key"

cp "$NETNS_DIR/ssh_config" "$t/cfg"
DDL_TIMEOUT=90 expect_exit 0 ddl_ssh run --backend mpirun -F cfg -H "${a[0]}:1,${a[1]}:1" -- "$t/ring_c"
expect_contains "$t/out" "[1] process 1 of 2 on h2"
echo PASS
