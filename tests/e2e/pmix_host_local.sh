#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ddl as the PMIx server (issue 33) on this machine: `ddl worker pmix-host`
# starts real Open MPI 4.1 programs itself, one world of N with no mpirun or
# orted anywhere; the keys they read; mpi4py's helloworld and ringtest;
# MPI_Abort(..., 3) -> exit 3 within seconds; a rank that leaves without
# MPI_Finalize; Ctrl-C; nothing left running and the server's folder gone.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
fixtures=$DDL_SOURCE_DIR/tests/fixtures/mpi
mpicc -O1 -o "$t/pmix_hello" "$fixtures/pmix_hello.c"
mpicc -O1 -o "$t/pmix_fail" "$fixtures/pmix_fail.c"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O1 -o "$t/pmix_keys" "$fixtures/pmix_keys.c" $(pkg-config --cflags --libs pmix)
export TMPDIR=$t/tmp
mkdir "$TMPDIR"
me=$(hostname)
host() { timeout -k 5 60 "$DDL" worker pmix-host "$@"; }
# A ddl in the background is killed if a check fails (its ranks die with it).
ddl_pid=""
trap 'rc=$?; [[ -n $ddl_pid ]] && kill -KILL "$ddl_pid" 2>/dev/null; rm -rf "$t"; exit $rc' EXIT

# One world of 4: size, universe, an allreduce over all.
expect_exit 0 host --ranks 4 -- "$t/pmix_hello"
for r in 0 1 2 3; do expect_contains "$t/out" "hello rank $r of 4 universe 4 on $me sum 6"; done

# A rank's PMIX_* variables are this server's alone: none inherited from a
# PMIx job that ddl itself runs in.
PMIX_LEFTOVER=1 PMIX_NAMESPACE=elsewhere expect_exit 0 host --ranks 1 -- sh -c 'env | grep "^PMIX_"'
expect_not_contains "$t/out" "PMIX_LEFTOVER"
expect_not_contains "$t/out" "PMIX_NAMESPACE=elsewhere"
expect_contains "$t/out" "PMIX_NAMESPACE=ddl-"

# The keys as a bare PMIx client reads them.
expect_exit 0 host --ranks 2 -- "$t/pmix_keys"
for want in "0 pmix.job.size=2" "1 pmix.job.size=2" "1 pmix.max.size=2" "1 pmix.univ.size=2" \
  "1 pmix.local.size=2" "1 pmix.num.nodes=1" "1 pmix.lpeers=0,1" "1 pmix.lldr=0" \
  "0 pmix.lrank=0" "1 pmix.lrank=1" "1 pmix.nrank=1" "1 pmix.hname=$me" "1 pmix.nodeid=0" \
  "1 pmix.appnum=0" "1 pmix.tdir.rmclean=true" "1 pmix.tmpdir=$TMPDIR/ddl-pmix.$me."; do
  expect_contains "$t/out" "$want"
done
expect_not_contains "$t/out" "missing"

# While the ranks run: they are ddl's own children, and nothing under ddl is
# mpirun, orted or prted (a rank that thought itself a singleton would fork
# an orted of its own).
"$DDL" worker pmix-host --ranks 3 -- "$t/pmix_hello" 3 >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 600); do
  (($(grep -c "^hello rank" "$t/out" || true) == 3)) && break
  sleep 0.05
done
expect_contains "$t/out" "hello rank 2 of 3"
tree=$(ps -eo pid=,ppid=,comm= | awk -v top="$ddl_pid" '
  { parent[$1] = $2; name[$1] = $3 }
  END { for (p in parent) { for (q = p; q != "" && q != 1; q = parent[q]) if (q == top) { print name[p]; break } } }')
[[ $(grep -cx pmix_hello <<<"$tree") == 3 ]] || fail "not 3 ranks under ddl: $tree"
if grep -Exq 'mpirun|mpiexec|orted|orterun|prted|prterun' <<<"$tree"; then fail "an MPI daemon runs under ddl: $tree"; fi
[[ $(pgrep -c -P "$ddl_pid" -x pmix_hello) == 3 ]] || fail "the ranks are not ddl's children"
wait "$ddl_pid" || fail "pmix-host with sleeping ranks failed: $(cat "$t/err")"
ddl_pid=""

# mpi4py (Debian's python3-mpi4py, from scripts/deps.sh): helloworld and ringtest.
/usr/bin/python3 -c 'import mpi4py' || fail "python3-mpi4py is not installed (scripts/deps.sh)"
expect_exit 0 host --ranks 4 -- /usr/bin/python3 -m mpi4py.bench helloworld
for r in 0 1 2 3; do expect_contains "$t/out" "Hello, World! I am process $r of 4 on $me."; done
expect_exit 0 host --ranks 4 -- /usr/bin/python3 -m mpi4py.bench ringtest -n 1024 -l 10
expect_contains "$t/out" "time for 10 loops"
expect_contains "$t/out" "(4 processes, 1024 bytes)"

# MPI_Abort(MPI_COMM_WORLD, 3) in rank 1: exit 3 within seconds, all gone.
start=$SECONDS
expect_exit 3 host --ranks 4 --grace 20s -- "$t/pmix_fail" abort
((SECONDS - start < 10)) || fail "MPI_Abort took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "ddl: error: rank 1 called MPI_Abort with status 3"
[[ -z $(pgrep -f -- "$t/pmix_fail") ]] || fail "ranks left after MPI_Abort: $(pgrep -af -- "$t/pmix_fail")"

# A rank that exits 0 without MPI_Finalize while the others wait: a failure.
start=$SECONDS
expect_exit 1 host --ranks 3 -- "$t/pmix_fail" exit0
((SECONDS - start < 10)) || fail "a rank without MPI_Finalize took $((SECONDS - start))s to end the job"
expect_contains "$t/err" "rank 1 exited with code 0 without calling MPI_Finalize"
[[ -z $(pgrep -f -- "$t/pmix_fail") ]] || fail "ranks left: $(pgrep -af -- "$t/pmix_fail")"

# Ctrl-C: forwarded to every rank, exit 130, nothing left.
"$DDL" worker pmix-host --ranks 3 -- "$t/pmix_fail" sleep >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 600); do
  (($(grep -c "started" "$t/out" || true) == 3)) && break
  sleep 0.05
done
expect_contains "$t/out" "rank 2 started"
kill -INT "$ddl_pid"
got=0
wait "$ddl_pid" || got=$?
ddl_pid=""
[[ $got == 130 ]] || fail "Ctrl-C gave exit $got: $(cat "$t/err")"
expect_contains "$t/err" "interrupted by SIGINT"
[[ -z $(pgrep -f -- "$t/pmix_fail") ]] || fail "ranks left after Ctrl-C: $(pgrep -af -- "$t/pmix_fail")"

# A program that is not there: exit 3, named.
expect_exit 3 host --ranks 2 -- "$t/no-such-program"
expect_contains "$t/err" "cannot start rank 0 ($t/no-such-program): No such file or directory"

# A host without libpmix (hidden in a mount namespace of its own): exit 2,
# said plainly, nothing started.
if can_hide_libpmix; then
  expect_exit 2 without_libpmix "$DDL" worker pmix-host --ranks 2 -- "$t/pmix_hello"
  expect_contains "$t/err" "cannot host a PMIx server: OpenPMIx's library is not installed on this host"
  expect_not_contains "$t/out" "hello rank"
fi

# Every server removed its folder.
[[ -z $(ls -A "$TMPDIR") ]] || fail "left in TMPDIR: $(ls -A "$TMPDIR")"
echo PASS
