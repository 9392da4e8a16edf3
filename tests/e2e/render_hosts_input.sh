#!/usr/bin/env bash
# Host sources for render: a hostfile, -H overriding the job file, no source.
source "$(dirname "$0")/common.inc"

cat >"$t/hostfile" <<'HF'
# OpenMPI / DeepSpeed form
alpha slots=3
beta slots=1 max_slots=4
HF
cat >"$t/job.toml" <<'TOML'
[job]
command = ["true"]
[hosts]
list = ["from-file:8"]
TOML

expect_exit 0 timeout 10 "$DDL" render --hostfile "$t/hostfile" --format mpich-hostfile -- true
[[ $(cat "$t/out") == $'alpha:3\nbeta:1' ]] || fail "hostfile input: $(cat "$t/out")"

# -H replaces the job file's hosts.
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" -H 'n[1-2]:2' --format hostfile
[[ $(cat "$t/out") == $'n1 slots=2\nn2 slots=2' ]] || fail "-H override: $(cat "$t/out")"
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format hostfile
[[ $(cat "$t/out") == 'from-file slots=8' ]] || fail "job hosts: $(cat "$t/out")"

# An MPICH hostfile and --np below the slots.
printf 'x:2\ny:2\n' >"$t/mpich"
expect_exit 0 timeout 10 "$DDL" render --hostfile "$t/mpich" --np 3 --format hostfile
[[ $(cat "$t/out") == $'x slots=2\ny slots=1' ]] || fail "mpich input: $(cat "$t/out")"

# A broken hostfile: origin:LINE, exit 2.
printf 'ok slots=1\nok slots=2\n' >"$t/dup"
expect_exit 2 timeout 10 "$DDL" render --hostfile "$t/dup" --format plan
expect_contains "$t/err" "$t/dup:2: host 'ok' is listed twice (first on line 1)"

# No host source: this machine alone, never DNS.
expect_exit 0 env -u OMP_NUM_THREADS timeout 10 "$DDL" render --np 2 --format env --rank 1 -- true
grep -qxF "MASTER_ADDR=127.0.0.1" "$t/out" || fail "local MASTER_ADDR"
grep -qxF "DDL_HOST=localhost" "$t/out" || fail "local DDL_HOST"
grep -qxF "OMP_NUM_THREADS=1" "$t/out" || fail "OMP_NUM_THREADS=1 missing with 2 ranks on a host"
# The user's own OMP_NUM_THREADS is copied, as torchrun does.
expect_exit 0 env OMP_NUM_THREADS=4 timeout 10 "$DDL" render --np 2 --format env --rank 1 -- true
grep -qxF "OMP_NUM_THREADS=4" "$t/out" || fail "the launcher's OMP_NUM_THREADS was not copied"
