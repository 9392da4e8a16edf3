#!/usr/bin/env bash
# ddl render: every format from a job file, exit codes, --rank checks, JSON.
source "$(dirname "$0")/common.inc"

cat >"$t/job.toml" <<'TOML'
[job]
name = "fmt"
command = ["python3", "train.py"]
frameworks = ["torch", "tensorflow", "horovod", "jax", "mpi"]
env = { NCCL_DEBUG = "WARN" }

[hosts]
list = ["node-a:2", "node-b:2"]

[tensorflow]
ps = 1
TOML

expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format plan
expect_contains "$t/out" "job fmt: 4 ranks on 2 hosts"
expect_contains "$t/out" "command: python3 train.py"
expect_contains "$t/out" "DDL_TOKEN='<redacted>'"
expect_contains "$t/out" "MASTER_ADDR=node-a"

expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format hostfile
[[ $(cat "$t/out") == $'node-a slots=2\nnode-b slots=2' ]] || fail "hostfile: $(cat "$t/out")"
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format mpich-hostfile
[[ $(cat "$t/out") == $'node-a:2\nnode-b:2' ]] || fail "mpich: $(cat "$t/out")"
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format deepspeed-hostfile
[[ $(cat "$t/out") == $'node-a slots=2\nnode-b slots=2' ]] || fail "deepspeed: $(cat "$t/out")"

expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format env --rank 3
for want in DDL_RANK=3 DDL_WORLD_SIZE=4 DDL_LOCAL_RANK=1 DDL_NODE_RANK=1 DDL_NUM_NODES=2 \
    DDL_HOST=node-b DDL_JOB=fmt DDL_ATTEMPT=0 "DDL_TOKEN='<redacted>'" MASTER_ADDR=node-a \
    "MASTER_PORT='<free-port>'" TORCH_NCCL_ASYNC_ERROR_HANDLING=1 NCCL_ASYNC_ERROR_HANDLING=1 \
    RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 \
    GROUP_WORLD_SIZE=2 ROLE_NAME=default HOROVOD_CROSS_RANK=1 HOROVOD_CROSS_SIZE=2 \
    HOROVOD_HOSTNAME=node-b "JAX_COORDINATOR_ADDRESS='node-a:<free-port>'" JAX_PROCESS_ID=3 \
    OMPI_COMM_WORLD_LOCAL_RANK=1 PMI_SIZE=4 CUDA_VISIBLE_DEVICES=1 NCCL_DEBUG=WARN; do
  grep -qxF -- "$want" "$t/out" || { cat "$t/out"; fail "env lacks $want"; }
done
expect_not_contains "$t/out" "TORCHELASTIC_USE_AGENT_STORE"

# env and tf-config need a rank in range.
expect_exit 2 timeout 10 "$DDL" render "$t/job.toml" --format env
expect_contains "$t/err" "ddl: error: --format env needs --rank R (0 to 3)"
expect_exit 2 timeout 10 "$DDL" render "$t/job.toml" --format tf-config --rank 4
expect_contains "$t/err" "ddl: error: --rank 4 is out of range: the plan has 4 ranks (0 to 3)"
expect_exit 2 timeout 10 "$DDL" render "$t/job.toml" --format yaml
expect_exit 2 timeout 10 "$DDL" render "$t/job.toml"
expect_contains "$t/err" "--format is required"

# The whole plan as JSON, shaped as DESIGN.md says.
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format json
python3 - "$t/out" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["job"] == "fmt" and plan["world_size"] == 4, plan
keys = ["rank", "host", "address", "local_rank", "local_size", "node_rank", "gpus", "env", "command"]
for i, r in enumerate(plan["ranks"]):
    assert list(r) == keys, list(r)
    assert r["rank"] == i and r["command"] == ["python3", "train.py"]
    assert r["env"]["DDL_TOKEN"] == "<redacted>" and r["env"]["RANK"] == str(i)
assert [r["host"] for r in plan["ranks"]] == ["node-a", "node-a", "node-b", "node-b"]
PY
# --json alone means the JSON plan too.
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --json
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["world_size"] == 4' "$t/out"

# Too many ranks for the slots: exit 2, both numbers named.
expect_exit 2 timeout 10 "$DDL" render "$t/job.toml" --format plan --np 5
expect_contains "$t/err" "np 5 is more than the 4 slots of 2 hosts"

# JSON is valid UTF-8 even when the input is not: a job named after a file
# whose stem is byte 0xff, and a command word with that byte, print U+FFFD.
stem=$'\xff'
printf '[job]\ncommand = ["python3"]\n' >"$t/$stem.toml"
expect_exit 0 timeout 10 "$DDL" render "$t/$stem.toml" --format json -H node-a:1 -- python3 $'a\xffb.py'
python3 - "$t/out" <<'PY'
import json, sys
plan = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert plan["job"] == "\ufffd", plan["job"]
assert plan["ranks"][0]["command"] == ["python3", "a\ufffdb.py"], plan["ranks"][0]["command"]
assert plan["ranks"][0]["env"]["DDL_JOB"] == "\ufffd", plan["ranks"][0]["env"]
PY
