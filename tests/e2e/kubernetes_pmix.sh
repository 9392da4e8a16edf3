#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ddl run --mpi pmix` with backend = "kubernetes" (issue 33): one
# `ddl worker pmix-host` per pod through `kubectl exec -i` and the shim, each
# hosting its pod's PMIx server. kubectl is the test double
# tests/fakes/kubectl: its 3 pods (2 slots each) all run on this machine under
# one hostname, as pods of a real cluster may share one, so each pod's server
# must still go by a name and folders of its own. mpi4py's helloworld and
# ringtest as one world of 6 with no mpirun or orted; every rank sees 3 nodes;
# MPI_Abort(..., 6) -> exit 6 within seconds; a rank without MPI_Finalize ->
# exit 1; kill -9 of ddl; nothing left (ranks, workers, folders).
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
/usr/bin/python3 -c 'import mpi4py' || fail "python3-mpi4py is not installed (scripts/deps.sh)"
fixtures=$DDL_SOURCE_DIR/tests/fixtures/mpi
mpicc -O1 -o "$t/pmix_fail" "$fixtures/pmix_fail.c"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O1 -o "$t/pmix_keys" "$fixtures/pmix_keys.c" $(pkg-config --cflags --libs pmix)
export FAKE_KUBECTL_PODS="$DDL_SOURCE_DIR/tests/fixtures/kubernetes/ready.json"
export FAKE_KUBECTL_LOG="$t/kubectl.log"
export TMPDIR=$t/tmp
mkdir "$TMPDIR"
kubectl_double_job "$t/job.toml"
me=$(hostname)
run() { timeout -k 5 90 "$DDL" run "$t/job.toml" --mpi pmix "$@"; }
shm_dirs() { find /dev/shm -maxdepth 1 -name 'ddl-pmix.*' | sort; }
shm_before=$(shm_dirs)

# Nothing of the job left: no rank, no pmix-host worker, no folder. (A
# worker is "$DDL worker pmix-host": every shim's command line holds the
# stack dumper, which names " worker pmix-host " too.)
nothing_left() {
  local i
  for i in $(seq 150); do
    [[ -z $(pgrep -f -- "$t/pmix_fail|$DDL worker pmix-host" || true) ]] && break
    sleep 0.1
  done
  [[ -z $(pgrep -f -- "$t/pmix_fail|$DDL worker pmix-host" || true) ]] ||
    fail "$1: left running: $(pgrep -af -- "$t/pmix_fail|$DDL worker pmix-host")"
  [[ -z $(ls -A "$TMPDIR") ]] || fail "$1: left in TMPDIR: $(ls -A "$TMPDIR")"
  left=$(comm -13 <(echo "$shm_before") <(shm_dirs) || true)
  [[ -z $left ]] || fail "$1: left in /dev/shm: $left"
}

# One world of 6 over the 3 pods, each pod's worker started by kubectl exec.
expect_exit 0 run -- /usr/bin/python3 -m mpi4py.bench helloworld
for r in 0 1 2 3 4 5; do expect_contains "$t/out" "[$r] Hello, World! I am process $r of 6 on $me."; done
expect_contains "$t/kubectl.log" "namespace=ml exec -i trainer-10 -c trainer -- sh -c"
nothing_left "helloworld"
expect_exit 0 run -- /usr/bin/python3 -m mpi4py.bench ringtest -n 1024 -l 10
expect_contains "$t/out" "(6 processes, 1024 bytes)"

# Each pod's server has a name of its own although the pods share a
# hostname; every rank sees 3 nodes and its own 2 local peers.
expect_exit 0 run -- "$t/pmix_keys"
for want in "[5] 5 pmix.num.nodes=3" "[5] 5 pmix.lpeers=4,5" "[5] 5 pmix.hname=$me-ddl2" \
  "[5] 5 pmix.hname=$me-ddl0" "[0] 0 pmix.job.size=6" "[3] 3 pmix.nodeid=1"; do
  expect_contains "$t/out" "$want"
done
expect_not_contains "$t/out" "missing"

# MPI_Abort(MPI_COMM_WORLD, 6) in rank 3 (the second pod): exit 6 in seconds.
start=$SECONDS
expect_exit 6 run -- "$t/pmix_fail" abort 6 3
((SECONDS - start < 20)) || fail "MPI_Abort took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "rank 3 called MPI_Abort with status 6"
expect_not_contains "$t/err" "command terminated with exit code"
nothing_left "MPI_Abort"

# A rank that exits 0 without MPI_Finalize while the others wait: exit 1.
expect_exit 1 run -- "$t/pmix_fail" exit0 0 4
expect_contains "$t/err" "rank 4 exited with code 0 without calling MPI_Finalize"
nothing_left "exit without MPI_Finalize"

# kill -9 of ddl: kubectl's stdin closes, each pod's shim ends its worker,
# and the worker its ranks.
"$DDL" run "$t/job.toml" --mpi pmix -- "$t/pmix_fail" sleep >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 300); do
  (($(grep -c "started" "$t/out" || true) == 6)) && break
  sleep 0.1
done
expect_contains "$t/out" "[5] rank 5 started"
kill -9 "$ddl_pid"
wait "$ddl_pid" 2>/dev/null || true
nothing_left "kill -9 of ddl"
echo PASS
