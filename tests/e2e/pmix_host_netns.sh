#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ddl as the PMIx server (issue 33) across 4 network-namespace hosts (real
# sshd each; tests/netns/hosts.inc, needs root): `ddl run` starts one
# `ddl worker pmix-host` per host, each hosts its host's PMIx server and 2
# ranks, and the fences go through the job rendezvous' allgather. mpi4py's
# helloworld and ringtest as one world of 8 with no mpirun or orted on any
# host; every rank sees every host's name; MPI_Abort(..., 3) -> ddl exits 3
# within seconds; Ctrl-C; nothing left on any host. Then the same through
# `ddl run --mpi pmix` (the workers started by ddl itself): Open MPI's ring
# and mpi4py's helloworld as one world, MPI_Abort(..., 5) from a rank on
# another host than rank 0 -> exit 5, a rank without MPI_Finalize -> exit 1.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
/usr/bin/python3 -c 'import mpi4py' || fail "python3-mpi4py is not installed (scripts/deps.sh)"
fixtures=$DDL_SOURCE_DIR/tests/fixtures/mpi
mpicc -O1 -o "$t/pmix_hello" "$fixtures/pmix_hello.c"
mpicc -O1 -o "$t/pmix_fail" "$fixtures/pmix_fail.c"
mpicc -O1 -o "$t/ring_c" "$fixtures/ring.c"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O1 -o "$t/pmix_keys" "$fixtures/pmix_keys.c" $(pkg-config --cflags --libs pmix)
chmod 755 "$t"
netns_up 4
spec=$(netns_hostspec 1)
# One ddl rank per host; it starts that host's 2 MPI ranks.
pmix_args() { printf '%s\n' run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- "$DDL" worker pmix-host --ranks 2; }
mapfile -t run_args < <(pmix_args)
native() { ddl_ssh "${run_args[@]}" "$@"; }
# In the background: ip netns exec becomes ddl, so $! is ddl itself.
native_bg() { ip netns exec "$NETNS_CLIENT" "$DDL" "${run_args[@]}" "$@" >"$t/out" 2>"$t/err" & }


expect_exit 0 native -- /usr/bin/python3 -m mpi4py.bench helloworld
for r in 0 1 2 3 4 5 6 7; do
  expect_contains "$t/out" "[$((r / 2))] Hello, World! I am process $r of 8 on h$((r / 2 + 1))."
done
netns_hosts_clean "helloworld"

expect_exit 0 native -- /usr/bin/python3 -m mpi4py.bench ringtest -n 1024 -l 10
expect_contains "$t/out" "(8 processes, 1024 bytes)"

# Each rank's own keys, and another host's rank's: the node map reached all.
expect_exit 0 native -- "$t/pmix_keys"
for want in "[3] 7 pmix.job.size=8" "[3] 7 pmix.num.nodes=4" "[3] 7 pmix.lpeers=6,7" \
  "[3] 7 pmix.lrank=1" "[3] 7 pmix.hname=h4" "[3] 7 pmix.hname=h1" "[3] 7 pmix.nodeid=3" \
  "[0] 0 pmix.lldr=0" "[2] 5 pmix.lldr=4"; do
  expect_contains "$t/out" "$want"
done
expect_not_contains "$t/out" "missing"

# While the ranks run: no MPI daemon in any host's namespace.
native_bg -- "$t/pmix_hello" 3
runner=$!
for _ in $(seq 600); do
  (($(grep -c "hello rank" "$t/out" || true) == 8)) && break
  sleep 0.05
done
for r in 0 1 2 3 4 5 6 7; do expect_contains "$t/out" "hello rank $r of 8 universe 8 on h$((r / 2 + 1)) sum 28"; done
for i in "${!NETNS_HOSTS[@]}"; do
  ranks=0
  for pid in $(ip netns pids "${NETNS_HOSTS[$i]}"); do
    comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
    [[ $comm =~ ^(mpirun|mpiexec|orted|orterun|prted|prterun)$ ]] && fail "$comm runs on h$((i + 1))"
    [[ $comm == pmix_hello ]] && ranks=$((ranks + 1))
  done
  [[ $ranks == 2 ]] || fail "$ranks ranks on h$((i + 1)), not 2"
done
wait "$runner" || fail "the sleeping hello failed: $(cat "$t/err")"
netns_hosts_clean "hello"

# MPI_Abort(MPI_COMM_WORLD, 3) in rank 1 (on h1): ddl exits 3 within seconds.
start=$SECONDS
expect_exit 3 native -- "$t/pmix_fail" abort
((SECONDS - start < 15)) || fail "MPI_Abort took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "rank 1 called MPI_Abort with status 3"
netns_hosts_clean "MPI_Abort"

# Ctrl-C to ddl: exit 130, nothing left on any host.
native_bg -- "$t/pmix_fail" sleep
runner=$!
for _ in $(seq 600); do
  (($(grep -c "started" "$t/out" || true) == 8)) && break
  sleep 0.05
done
expect_contains "$t/out" "rank 7 started"
kill -INT "$runner"
got=0
wait "$runner" || got=$?
[[ $got == 130 ]] || fail "Ctrl-C gave exit $got: $(cat "$t/err")"
netns_hosts_clean "Ctrl-C"

# ddl run --mpi pmix: the ring over 2 hosts of 2 slots, one world of 4.
mpi_run() { ddl_ssh run "$NETNS_DIR/ssh.toml" --mpi pmix "$@"; }
expect_exit 0 mpi_run -H "$NETNS_NET.[1-2]:2" "$t/ring_c"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] process $r of 4 on h$((r / 2 + 1))"; done
expect_contains "$t/out" "[0] process 0 passed"
netns_hosts_clean "ring_c"

# [mpi] launch in the job file; mpi4py's helloworld as one world of 8.
{ cat "$NETNS_DIR/ssh.toml"; printf '[mpi]\nlaunch = "pmix"\n'; } >"$t/pmix.toml"
expect_exit 0 ddl_ssh run "$t/pmix.toml" -H "$(netns_hostspec 2)" /usr/bin/python3 -m mpi4py.bench helloworld
for r in 0 1 2 3 4 5 6 7; do
  expect_contains "$t/out" "[$r] Hello, World! I am process $r of 8 on h$((r / 2 + 1))."
done
netns_hosts_clean "mpi4py helloworld"

# MPI_Abort(MPI_COMM_WORLD, 5) in rank 5 (on h3): ddl exits 5, all gone.
start=$SECONDS
expect_exit 5 mpi_run -H "$(netns_hostspec 2)" "$t/pmix_fail" abort 5 5
((SECONDS - start < 15)) || fail "MPI_Abort took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "rank 5 called MPI_Abort with status 5"
netns_hosts_clean "MPI_Abort through ddl run"

# Rank 1 leaves without MPI_Finalize while the others wait: exit 1, all gone.
start=$SECONDS
expect_exit 1 mpi_run -H "$(netns_hostspec 1)" "$t/pmix_fail" exit0
((SECONDS - start < 15)) || fail "a rank without MPI_Finalize took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "rank 1 exited with code 0 without calling MPI_Finalize"
netns_hosts_clean "no MPI_Finalize through ddl run"
echo PASS
