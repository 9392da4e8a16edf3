#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# backend slurm when srun cannot launch a task (issue 40, item 10): on a real
# Slurm, node h2's TmpFS is gone, so Slurm's mpi/pmix plugin fails there and
# srun aborts the step ("task 2 launch failed"); slurmstepd then cancels the
# ranks already up on h1. That cancel is srun's own, not scancel, the time
# limit or preemption: ddl names the task srun could not launch and what srun
# said, exit 3, and nothing is left on any node.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
[[ -n $(compgen -G "/usr/lib/*/slurm*/mpi_pmix*.so") ]] || skip "Slurm's mpi/pmix plugin is not installed"
slurm_up 2
mark="slf$$x$RANDOM"
mpicc -O1 -o "$t/hello-$mark" "$DDL_SOURCE_DIR/tests/fixtures/mpi/pmix_hello.c"
chmod 755 "$t"
rm -rf "$SLURM_DIR/tmp/h2"

rc=0
slurm_login salloc -Q -N2 --ntasks-per-node=2 "$DDL" run --mpi pmix "$t/hello-$mark" 3 >"$t/out" 2>"$t/err" || rc=$?
[[ $rc == 3 ]] || { cat "$t/err"; fail "a task srun could not launch: exit $rc, want 3"; }
# ddl's own lines, exactly (the ranks' own lines, Slurm's cancel among them, aside).
grep -v '^\[[0-9]*\] ' "$t/err" | sed -E 's/ after [0-9.]+s$/ after Ns/' >"$t/said"
r=$(sed -nE 's/^ddl: error: rank ([23]) on h2 .*/\1/p' "$t/said")
[[ -n $r ]] || { cat "$t/err"; fail "no rank of h2 blamed"; }
printf '%s\n' "ddl: error: rank $r on h2 could not run: srun could not launch it: task $r launch failed: Unspecified error after Ns" \
  "ddl: rank $r wrote nothing on stderr" >"$t/want"
diff "$t/want" "$t/said" || { cat "$t/err"; fail "ddl's lines differ (want, got)"; }
expect_not_contains "$t/err" "scancel, the time limit or preemption"
slurm_wait_idle
[[ $(slurm_count_all "$mark") == 0 ]] || fail "a rank is left on a node"
echo PASS
