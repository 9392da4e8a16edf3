#!/usr/bin/env bash
# The Slurm test bed itself (tests/slurm/testbed.inc): 4 real slurmd nodes
# answer srun with their own hostnames, salloc gives the SLURM_* a launcher
# reads, and a step's tasks are gone once it ends.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
slurm_up 4

got=$(slurm_login srun -N4 hostname | sort | tr '\n' ' ')
[[ $got == "h1 h2 h3 h4 " ]] || fail "srun -N4 hostname gave '$got'"

got=$(slurm_login salloc -Q -N2 --ntasks-per-node=2 sh -c \
  'echo "$SLURM_JOB_NODELIST $SLURM_TASKS_PER_NODE ${SLURM_PROCID:-none}"')
[[ $got == "h[1-2] 2(x2) none" ]] || fail "salloc env gave '$got'"

# An impossible request fails at once instead of queueing forever.
expect_exit 1 slurm_login srun -N5 true

# A step's tasks end with it.
marker="ddl-slurm-bed-$$"
expect_exit 0 slurm_login srun -N4 sh -c "sleep 0.2" "$marker"
[[ $(slurm_count_all "$marker") == 0 ]] || fail "tasks left after the step"
