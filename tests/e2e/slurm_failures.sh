#!/usr/bin/env bash
# backend slurm on a real Slurm when things go wrong, and with a real
# program: real PyTorch DDP (gloo) over one srun step; scancel of the
# allocation while the gang runs; a node that crashes mid-run. In every case
# ddl ends with a clear status and nothing is left on any node.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
python=$(torch_python)
slurm_up 4

# Real torch DDP: 4 nodes x 2 ranks, env:// from what ddl rendered per rank.
if [[ -n $python ]]; then
  expect_exit 0 slurm_login salloc -Q -N4 --ntasks-per-node=2 "$DDL" run --backend slurm -- \
    "$python" "$DDL_SOURCE_DIR/tests/fixtures/clients/torch_allreduce.py"
  for r in 0 1 2 3 4 5 6 7; do expect_contains "$t/out" "[$r] rank $r of 8: allreduce sum 36 (want 36) ok"; done
  slurm_wait_idle
fi

# start_gang NAME: ddl runs a 4-rank gang inside salloc -N4 in the
# background; returns once every rank is up.
start_gang() {
  local name=$1
  mkdir -p "$t/$name"
  slurm_login salloc -Q -N4 -J "$name" "$DDL" run --backend slurm -- \
    sh -c 'touch '"$t/$name"'/up.$DDL_RANK; exec sleep 77' "$name" >"$t/out" 2>"$t/err" &
  runner=$!
  wait_files 4 "$t/$name/up.*"
}

# scancel of the whole allocation: every rank was stopped by SIGTERM, so
# 143, and ddl says Slurm cancelled the step; nothing is left.
start_gang ddl-scancel
jobid=$(ip netns exec "$NETNS_CLIENT" squeue -h -n ddl-scancel -o %i)
[[ -n $jobid ]] || fail "no job ddl-scancel in squeue"
ip netns exec "$NETNS_CLIENT" scancel "$jobid"
rc=0; wait "$runner" || rc=$?
[[ $rc == 143 ]] || { cat "$t/err"; fail "ddl exited $rc after scancel of its allocation, want 143"; }
expect_contains "$t/err" "rank 0 on h1 was stopped: Slurm cancelled the step (scancel, the time limit or preemption): STEP "
expect_not_contains "$t/err" "srun failed"
slurm_wait_idle
[[ $(slurm_count_all "sleep 77") == 0 ]] || fail "ranks left on the nodes after scancel"

# A node crashes mid-run (its link cut and every process on it killed):
# Slurm notices (SlurmdTimeout, 10 s here) and ends the step; ddl names the
# node and its rank, exit 3 as for a lost ssh host.
start_gang ddl-crash
start=$SECONDS
netns_crash_host 2
rc=0; wait "$runner" || rc=$?
[[ $rc == 3 ]] || { cat "$t/err"; fail "ddl exited $rc after node h3 crashed, want 3"; }
expect_contains "$t/err" "rank 2 on h3 could not run: Slurm reports that node h3 failed"
echo "ok: ddl ended $((SECONDS - start)) s after h3 crashed"
for i in 0 1 3; do
  [[ $(netns_count "$i" "sleep 77") == 0 ]] || fail "ranks left on h$((i + 1)) after h3 crashed"
done
echo ok
