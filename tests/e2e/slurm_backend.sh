#!/usr/bin/env bash
# backend slurm on a real Slurm (tests/slurm/testbed.inc): inside salloc -N4
# the gang is one srun step with the plan's placement and each rank's own
# env; a failing rank ends the gang with its code (not srun's 143); Ctrl-C
# leaves nothing on any node; outside an allocation the backend is refused.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
slurm_up 4

# Outside any allocation: a clear error, exit 2, nothing started.
expect_exit 2 "$DDL" run --backend slurm -- true
expect_contains "$t/err" "backend slurm starts the ranks as a step of the Slurm allocation ddl runs in, but SLURM_JOB_ID is not set"

# salloc_ddl SALLOC_ARGS... -- DDL_ARGS...
salloc_ddl() {
  local args=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  slurm_login salloc -Q "${args[@]}" "$DDL" "$@"
}

# Inside an allocation without srun on PATH: a clear error, nothing started.
expect_exit 3 slurm_login salloc -Q -N1 /usr/bin/env PATH=/nowhere "$DDL" run --backend slurm -- true
expect_contains "$t/err" "backend slurm needs Slurm's srun on PATH (Debian: apt-get install slurm-client)"
slurm_wait_idle

# auto inside the allocation is slurm; placement and env per rank. A value
# with quotes, newlines and $ arrives byte for byte.
cat >"$t/job.toml" <<'TOML'
[job]
env = { V_ODD = "it's \"q\" $HOME `id`\nline2" }
[slurm]
srun_args = ["--job-name=ddl-srun-args"]
TOML
expect_exit 0 salloc_ddl -N4 --ntasks-per-node=2 -- render --format plan "$t/job.toml" -- true
expect_contains "$t/out" "backend slurm (auto: the hosts are the Slurm allocation ddl runs in)"
expect_exit 0 salloc_ddl -N4 --ntasks-per-node=2 -- run "$t/job.toml" -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname) local=$DDL_LOCAL_RANK world=$WORLD_SIZE name=$SLURM_JOB_NAME step=${SLURM_STEP_ID:-none}"; printf %s "$V_ODD" >"'"$t"'/odd.$DDL_RANK"'
for r in 0 1 2 3 4 5 6 7; do
  expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1)) local=$((r % 2)) world=8 name=ddl-srun-args step="
  [[ $(cat "$t/odd.$r"; echo x) == $'it\'s "q" $HOME `id`\nline2x' ]] || fail "rank $r: V_ODD differs: $(cat "$t/odd.$r")"
done
expect_not_contains "$t/out" "step=none"
expect_not_contains "$t/out" "ddl-slurm:"
expect_not_contains "$t/err" "ddl-slurm:"
slurm_wait_idle

# Fewer ranks than tasks, placed by the plan: --np 3 fills h1 then h2.
expect_exit 0 salloc_ddl -N2 --ntasks-per-node=2 -- run --backend slurm --np 3 -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname)"'
for r in 0 1 2; do expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1))"; done
slurm_wait_idle

# A failing rank: the gang ends with its code (3), fast, not srun's 143.
start=$SECONDS
expect_exit 3 salloc_ddl -N4 -- run --backend slurm -- \
  sh -c 'if [ "$DDL_RANK" = 2 ]; then sleep 0.5; exit 3; fi; sleep 30'
((SECONDS - start < 20)) || fail "the gang took $((SECONDS - start)) s to end after rank 2 failed"
expect_contains "$t/err" "rank 2"
slurm_wait_idle

# Ctrl-C: every rank gets SIGINT and its trap runs, ddl exits 130, nothing
# is left on any node. Slurm signals node by node: a rank that exits on
# SIGINT first must not make srun's --kill-on-bad-exit kill the ranks not yet
# reached, so each rank records which signal it caught. Without cgroups
# Slurm signals a node's processes one by one: the rank naps in a loop so
# that its shell outlives a nap killed first and runs its trap.
marker="ddl-slurm-int-$$"
mkdir "$t/int"
slurm_login salloc -Q -N4 "$DDL" run --backend slurm -- \
  sh -c 'trap "echo int >'"$t"'/int/\$DDL_RANK; exit 130" INT; trap "echo term >'"$t"'/int/\$DDL_RANK; exit 143" TERM; touch '"$t"'/int/up.$DDL_RANK; while :; do sleep 0.2; done' "$marker" \
  >"$t/out" 2>"$t/err" &
runner=$!
wait_files 4 "$t/int/up.*"
ddl_pid=$(pgrep -f -n "^$DDL run --backend slurm") || fail "ddl is not running"
kill -INT "$ddl_pid"
rc=0; wait "$runner" || rc=$?
[[ $rc == 130 ]] || { cat "$t/err"; fail "ddl exited $rc after SIGINT, want 130"; }
wait_files 4 "$t/int/[0-3]"
[[ $(cat "$t"/int/[0-3]) == $'int\nint\nint\nint' ]] || fail "not every rank caught SIGINT: $(cat "$t"/int/[0-3])"
slurm_wait_idle
[[ $(slurm_count_all "$marker") == 0 ]] || fail "processes left on the nodes after Ctrl-C"
[[ $(slurm_count_all "sleep 0.2") == 0 ]] || fail "sleep left on the nodes after Ctrl-C"
