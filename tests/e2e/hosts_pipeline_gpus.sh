#!/usr/bin/env bash
# One host pipeline (issue 26): with slots = "gpus" (a test double of
# nvidia-smi with 2 GPUs), --exclude localhost:1 holds alike for ddl hosts,
# render, run and sweep: GPU 1 is nobody's. (The elastic re-plan goes
# through the same function: tests/unit/test_launch_plan_hosts.cpp.)
source "$(dirname "$0")/common.inc"
fake_nvidia_smi "$t/bin" 2
export PATH="$t/bin:$PATH"
cat >"$t/job.toml" <<'TOML'
[job]
command = 'sleep 0.5; echo "ws=$DDL_WORLD_SIZE gpus=$CUDA_VISIBLE_DEVICES loss=1"'
[hosts]
list = ["localhost"]
slots = "gpus"
[sweep]
method = "list"
metric = { name = "loss" }
[sweep.parameters]
n = [0, 1]
TOML

expect_exit 0 "$DDL" hosts "$t/job.toml" --exclude localhost:1 --json
python3 -c 'import json,sys; h = json.load(open(sys.argv[1]))["hosts"]; assert [(x["slots"], x["gpus"]) for x in h] == [(1, [0])], h' "$t/out"
expect_exit 0 "$DDL" render "$t/job.toml" --exclude localhost:1 --format json
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["world_size"] == 1 and d["ranks"][0]["gpus"] == [0], d' "$t/out"
expect_exit 0 "$DDL" run "$t/job.toml" --exclude localhost:1
expect_contains "$t/out" "[0] ws=1 gpus=0 loss=1"
expect_not_contains "$t/out" "[1]"

# The sweep: 1 slot, so the trials run one after the other, both on GPU 0
# (it used to see 2 slots and run trial 1 on GPU 1).
expect_exit 0 "$DDL" sweep "$t/job.toml" --exclude localhost:1 --dir "$t/s"
expect_contains "$t/err" "2 trials (2 to run), 1 ranks each, on 1 slots"
for trial in 0 1; do
  expect_contains "$t/s/trial-000$trial/output.log" "[0] ws=1 gpus=0 loss=1"
done
# Without --exclude both GPUs are slots, one trial on each.
expect_exit 0 "$DDL" sweep "$t/job.toml" --dir "$t/both"
expect_contains "$t/both/trial-0000/request.json" '"gpus": [0]'
expect_contains "$t/both/trial-0001/request.json" '"gpus": [1]'
echo PASS
