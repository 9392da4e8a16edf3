#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ddl run --mpi pmix` killed with SIGKILL mid-job leaves nothing of the job
# (issue 40, item 5): not its ranks or PMIx host worker, and not the host's
# PMIx folders ($TMPDIR/ddl-pmix.HOST.* with the server's rendezvous and
# shared-memory files, /dev/shm/ddl-pmix.HOST.* with the ranks' segments).
# Before, the worker was killed with the job's process group before its own
# cleanup and both folders stayed; now a remover in a session of its own
# takes them once the worker has gone.
source "$(dirname "$0")/common.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
mpicc -O1 -o "$t/pmix_hello" "$DDL_SOURCE_DIR/tests/fixtures/mpi/pmix_hello.c"
export TMPDIR=$t/tmp
mkdir "$TMPDIR"
prefix="ddl-pmix.$(hostname | tr -c 'A-Za-z0-9._\n-' '_' | cut -c1-64)."
shm_before=$(ls /dev/shm | grep -F "$prefix" || true)
ddl_pid=""
trap 'rc=$?; [[ -n $ddl_pid ]] && kill -KILL "$ddl_pid" 2>/dev/null; rm -rf "$t"; exit $rc' EXIT

# new_shm: this job's folders in /dev/shm (those not there before it).
new_shm() { comm -13 <(echo "$shm_before") <(ls /dev/shm | grep -F "$prefix" || true) | grep . || true; }
left() {
  ls "$TMPDIR"
  new_shm
  pgrep -af -- "$t/pmix_hello|ddl-pmix-remover|worker pmix-host" | grep -v pgrep || true
}

"$DDL" run --mpi pmix --np 3 "$t/pmix_hello" 60 >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 600); do
  (($(grep -c "^\[.\] hello rank" "$t/out" || true) == 3)) && break
  sleep 0.05
done
(($(grep -c "^\[.\] hello rank" "$t/out" || true) == 3)) || fail "the ranks did not start: $(cat "$t/err")"
[[ -n $(ls "$TMPDIR") && -n $(new_shm) ]] || fail "no PMIx folders while the job runs: TMPDIR: $(ls "$TMPDIR"); /dev/shm: $(new_shm)"
kill -KILL "$ddl_pid"
wait "$ddl_pid" 2>/dev/null || true
ddl_pid=""
for _ in $(seq 100); do [[ -z $(left) ]] && break; sleep 0.1; done
[[ -z $(left) ]] || fail "left after ddl was killed (SIGKILL): $(left)"
echo PASS
