#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [mpi] launch = "auto" / --mpi auto (issue 33): pmix only where it is
# proven (the program links Open MPI's libmpi.so.40, OpenPMIx is here, backend
# local or ssh), mpirun otherwise with mpirun's own rules; the backend's line
# says which and why. An Open MPI ring runs as one world under ddl's PMIx
# server with no mpirun; MPICH's ring goes to backend mpirun; a script (no MPI
# library in its ELF) is mpirun's business too; without libpmix on this
# machine backend local stays the MPI singletons' error (exit 2).
source "$(dirname "$0")/common.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
fixtures=$DDL_SOURCE_DIR/tests/fixtures/mpi
mpicc.openmpi -O1 -o "$t/ring_c" "$fixtures/ring.c"
mpicc.openmpi -O1 -o "$t/pmix_hello" "$fixtures/pmix_hello.c"
export TMPDIR=$t/tmp
mkdir "$TMPDIR"
me=$(hostname)
run() { timeout -k 5 60 "$DDL" run "$@"; }
why_pmix="mpi.launch auto: pmix, as $t/ring_c links Open MPI's libmpi.so.40 and OpenPMIx is installed"

# Open MPI's ring on this machine: pmix, one world of 4, no mpirun.
expect_exit 0 run --mpi auto --np 4 --dry-run "$t/ring_c"
expect_contains "$t/out" "backend local (auto: every host is this machine; $why_pmix)"
expect_contains "$t/out" "worker pmix-host --host-ranks 4"
expect_contains "$t/out" "MPI world (--mpi pmix): 4 ranks on 1 host"
expect_exit 0 run --mpi auto --np 4 -v "$t/ring_c"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] process $r of 4 on $me"; done
expect_contains "$t/err" "$why_pmix"
# The job file's key, backend local named.
printf '[launch]\nbackend = "local"\nnp = 3\n[mpi]\nlaunch = "auto"\n' >"$t/job.toml"
expect_exit 0 run "$t/job.toml" "$t/pmix_hello" 0
expect_contains "$t/out" "[2] hello rank 2 of 3 universe 3 on $me sum 3"
# render and hosts make run's choice (they said backend mpirun before).
printf '[job]\ncommand = ["%s"]\n[mpi]\nlaunch = "auto"\n' "$t/ring_c" >"$t/auto.toml"
expect_exit 0 "$DDL" render "$t/auto.toml" -H localhost:2 --format plan
expect_contains "$t/out" "backend local (auto: every host is this machine; $why_pmix)"
expect_exit 0 "$DDL" hosts "$t/auto.toml" -H localhost:2 -v
expect_contains "$t/err" "$why_pmix"

# Not proven: mpirun, with its own rules.
# shellcheck disable=SC2016 # expanded by each rank's sh
expect_exit 0 run --mpi auto --np 2 --dry-run -- sh -c 'echo $DDL_RANK'
expect_contains "$t/out" "mpi.launch auto: mpirun, as no MPI program found (its ELF names no MPI library)"
expect_not_contains "$t/out" "pmix-host"
if have mpicc.mpich mpich; then
  mpicc.mpich -O1 -o "$t/ring_mpich" "$fixtures/ring.c"
  expect_exit 0 run --mpi auto --np 2 --dry-run "$t/ring_mpich"
  expect_contains "$t/out" "backend mpirun (auto: $t/ring_mpich links the MPI library libmpich.so.12"
  expect_contains "$t/out" "mpi.launch auto: mpirun, as $t/ring_mpich links libmpich.so.12, not Open MPI's libmpi.so.40"
fi
# Pods (the kubectl test double): not proven there, so mpirun's rule, which
# refuses the Open MPI program on backend kubernetes.
export FAKE_KUBECTL_PODS="$DDL_SOURCE_DIR/tests/fixtures/kubernetes/ready.json"
printf '[launch]\nbackend = "kubernetes"\n[kubernetes]\nselector = "app=trainer"\nkubectl = "%s"\n' \
  "$DDL_SOURCE_DIR/tests/fakes/kubectl" >"$t/k8s.toml"
expect_exit 2 run "$t/k8s.toml" --mpi auto --np 2 --dry-run "$t/ring_c"
expect_contains "$t/err" "links the MPI library libmpi.so.40: backend kubernetes would start its 2 ranks"

# No libpmix on this machine (hidden in a mount namespace of its own): auto
# is mpirun, and backend local refuses the Open MPI program (exit 2) instead
# of starting 2 singletons.
if can_hide_libpmix; then
  expect_exit 2 without_libpmix "$DDL" run --mpi auto --backend local --np 2 "$t/ring_c"
  expect_contains "$t/err" "links the MPI library libmpi.so.40: backend local would start its 2 ranks as 2 one-rank MPI jobs"
  expect_not_contains "$t/out" "process"
fi

[[ -z $(ls -A "$TMPDIR") ]] || fail "left in TMPDIR: $(ls -A "$TMPDIR")"
echo PASS
