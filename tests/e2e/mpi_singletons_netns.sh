#!/usr/bin/env bash
# MPI programs over ssh on the namespace hosts (issue 28): a program that
# links Open MPI makes `auto` take mpirun (one world across both hosts) and
# --backend ssh with two ranks of it is exit 2; mpi4py and a script around
# the mpicc program, which ddl cannot see, get the singleton guard on every
# rank: MPI_Init refuses and the summary says why in one line; never two
# "0 of 1". One rank stays a valid singleton. MPICH's Hydra runs one world
# across both hosts. This machine: mpi_singletons.sh.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
netns_up 2
a=("${NETNS_ADDRS[@]}")
job=$NETNS_DIR/ssh.toml
cd "$t"
mpicc -O1 -o ring_c "$DDL_SOURCE_DIR/tests/fixtures/mpi/ring.c"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$t/ring_c" >ring.sh
chmod +x ring.sh
hosts="${a[0]},${a[1]}"
hint="write --backend mpirun, or frameworks = [\"mpi\"] in [job]"

# Seen: auto takes mpirun and runs one world across both hosts.
DDL_TIMEOUT=90 expect_exit 0 ddl_ssh run "$job" -H "$hosts" "$t/ring_c"
expect_contains "$t/out" "[0] process 0 of 2 on h1"
expect_contains "$t/out" "[1] process 1 of 2 on h2"
expect_not_contains "$t/out" "of 1 on"
# --backend ssh: exit 2 before anything starts.
expect_exit 2 ddl_ssh run "$job" -H "$hosts" --backend ssh "$t/ring_c"
expect_contains "$t/err" "links the MPI library libmpi.so.40: backend ssh would start its 2 ranks as 2 one-rank MPI jobs"

# Unseen, over ssh: the guard on each host.
DDL_TIMEOUT=90 expect_exit 1 ddl_ssh run "$job" -H "$hosts" --backend ssh "$t/ring.sh"
expect_contains "$t/err" "$hint"
expect_not_contains "$t/out" "of 1 on"
DDL_TIMEOUT=90 expect_exit 0 ddl_ssh run "$job" -H "${a[0]}" --backend ssh "$t/ring.sh"
expect_contains "$t/out" "[0] process 0 of 1 on h1"
if /usr/bin/python3 -c "import mpi4py" 2>/dev/null; then
  DDL_TIMEOUT=90 expect_exit 1 ddl_ssh run "$job" -H "$hosts" /usr/bin/python3 -m mpi4py.bench helloworld
  expect_contains "$t/err" "$hint"
  expect_not_contains "$t/out" "of 1 on"
  DDL_TIMEOUT=90 expect_exit 0 ddl_ssh run "$job" -H "$hosts" --backend mpirun /usr/bin/python3 -m mpi4py.bench helloworld
  expect_contains "$t/out" "[1] Hello, World! I am process 1 of 2 on h2."
fi

# MPICH's Hydra across both hosts ([mpirun] flavour = "mpich"): its proxies
# dial the launcher back at the rendezvous' address; at its hostname, which
# the hosts do not resolve to it, Hydra hung until killed.
if have mpicc.mpich mpich; then
  mpicc.mpich -O1 -o ring_mpich "$DDL_SOURCE_DIR/tests/fixtures/mpi/ring.c"
  { cat "$job"; printf '[mpirun]\nflavour = "mpich"\n'; } >mpich.toml
  DDL_TIMEOUT=90 expect_exit 0 ddl_ssh run mpich.toml -H "$hosts" --backend mpirun "$t/ring_mpich"
  expect_contains "$t/out" "[0] process 0 of 2 on h1"
  expect_contains "$t/out" "[1] process 1 of 2 on h2"
fi
