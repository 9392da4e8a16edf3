#!/usr/bin/env bash
# Inside a real Slurm allocation (salloc on the test bed), ddl takes its hosts
# from it without being told: nodes, tasks per node, source "slurm"; --slurm
# forces it, [hosts] slurm = false turns it off. ddl run --backend ssh then
# reaches the allocated nodes by name.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
slurm_up 4

# salloc on the login node, ddl inside: salloc_ddl SALLOC_ARGS... -- DDL_ARGS...
salloc_ddl() {
  local args=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  slurm_login salloc -Q "${args[@]}" "$DDL" "$@"
}

# 4 nodes, 2 tasks each: the allocation is the host source.
expect_exit 0 salloc_ddl -N4 --ntasks-per-node=2 -- hosts --json
for h in h1 h2 h3 h4; do
  expect_contains "$t/out" "\"name\":\"$h\",\"address\":\"$h\",\"slots\":2"
done
expect_contains "$t/out" '"source":"slurm"'
expect_exit 0 salloc_ddl -N4 --ntasks-per-node=2 -- hosts
expect_contains "$t/out" "slurm"

# Uneven tasks per node: -n5 -N3 gives SLURM_TASKS_PER_NODE=2(x2),1 -> 5
# ranks, two on each of the first two nodes and one on the third, in that
# order. (With --ntasks-per-node=2 Slurm makes it 2(x3), 6 tasks.)
expect_exit 0 slurm_login salloc -Q -n5 -N3 printenv SLURM_TASKS_PER_NODE
[[ $(cat "$t/out") == "2(x2),1" ]] || fail "the test bed gave SLURM_TASKS_PER_NODE=$(cat "$t/out"), not 2(x2),1"
expect_exit 0 salloc_ddl -n5 -N3 -- render --format json -- true
python3 - "$t/out" <<'PY' || { cat "$t/out"; fail "5 ranks spread 2, 2, 1 over three nodes expected"; }
import json, sys
ranks = json.load(open(sys.argv[1]))["ranks"]
hosts = [r["host"] for r in ranks]
assert len(hosts) == 5 and hosts[0] == hosts[1] and hosts[2] == hosts[3] and len(set(hosts)) == 3, hosts
assert [r["local_rank"] for r in ranks] == [0, 1, 0, 1, 0] and [r["local_size"] for r in ranks] == [2, 2, 2, 2, 1], ranks
PY

# slurm = false: this machine alone, even inside the allocation.
printf '[hosts]\nslurm = false\n' >"$t/off.toml"
expect_exit 0 salloc_ddl -N2 -- hosts --json "$t/off.toml"
expect_contains "$t/out" '"source":"local"'
expect_not_contains "$t/out" '"source":"slurm"'

# --slurm outside any allocation: a clear error, exit 2.
expect_exit 2 slurm_login env -u SLURM_JOB_ID "$DDL" hosts --slurm
expect_contains "$t/err" "SLURM_JOB_NODELIST is not set"
expect_exit 2 "$DDL" hosts --slurm -H a:1
expect_contains "$t/err" "--slurm: cannot be combined with --hosts"

# ddl run --backend ssh inside salloc -N4: one rank per task, by node name,
# each rank with its own env.
expect_exit 0 salloc_ddl -N4 --ntasks-per-node=2 -- run "$NETNS_DIR/ssh.toml" --backend ssh -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname) local=$DDL_LOCAL_RANK world=$DDL_WORLD_SIZE"'
for r in 0 1 2 3 4 5 6 7; do
  expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1)) local=$((r % 2)) world=8"
done
slurm_wait_idle
