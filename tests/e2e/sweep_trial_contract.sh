#!/usr/bin/env bash
# ddl sweep on this machine, through its trial contract (issue 26): --np
# reaches every trial; split rank logs still give the metric; a job file
# edited mid-sweep changes no trial (each reads its request.json, written
# with "version": 1, and writes a result.json); a bad request is refused.
# (slots = "gpus" with --exclude: hosts_pipeline_gpus.sh.)
source "$(dirname "$0")/common.inc"

# 1. --np 2: every trial runs 2 ranks (it used to run one).
cat >"$t/np.toml" <<'TOML'
[job]
command = 'echo "ws=$DDL_WORLD_SIZE rank=$DDL_RANK loss=1"'
[sweep]
method = "list"
metric = { name = "loss" }
[sweep.parameters]
n = [0, 1]
TOML
expect_exit 0 "$DDL" sweep "$t/np.toml" --np 2 -H localhost:4 --dir "$t/np"
expect_contains "$t/err" "2 trials (2 to run), 2 ranks each, on 4 slots"
for trial in 0 1; do
  log=$t/np/trial-000$trial/output.log
  expect_contains "$log" "[0] ws=2 rank=0 loss=1"
  expect_contains "$log" "[1] ws=2 rank=1 loss=1"
done
expect_exit 0 "$DDL" sweep "$t/np.toml" --np 1 -H localhost:4 --dry-run --json
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["np"] == 1' "$t/out"
expect_exit 2 "$DDL" sweep "$t/np.toml" --np 1:2 -H localhost:4
expect_contains "$t/err" "--np: 1:2: ddl sweep takes the ranks of each trial, N, not MIN:MAX"

# 2. [job] split_logs and log_dir: the metric of rank 0's stdout log, named
#    in the trial's result.json.
cat >"$t/split.toml" <<TOML
[job]
command = 'echo "loss=0.{n}5"; echo "noise" >&2'
split_logs = true
log_dir = "$t/ignored"
[sweep]
method = "list"
metric = { name = "loss" }
[sweep.parameters]
n = [1, 2]
TOML
expect_exit 0 "$DDL" sweep "$t/split.toml" -H localhost:2 --dir "$t/split" --json
python3 - "$t/out" "$t/split" <<'PY'
import json, sys
doc, sweep = json.load(open(sys.argv[1])), sys.argv[2]
assert [(t["trial"], t["metric"]) for t in doc["trials"]] == [(0, 0.15), (1, 0.25)], doc["trials"]
result = json.load(open(f"{sweep}/trial-0000/result.json"))
assert result["version"] == 1 and result["reason"] == "ok" and result["exit_code"] == 0, result
log = f"{sweep}/trial-0000/attempt-0/rank-0.attempt-0.stdout.log"
assert result["metric"] == {"value": 0.15, "source": log}, result
assert result["rank0_logs"] == [log, log.replace(".stdout.", ".stderr.")], result
assert result["hosts"] == [{"name": "localhost", "slots": 1, "address": "localhost"}], result["hosts"]
PY

# 3. The job file edited while trial 0 runs: trial 1 still runs the job as
#    the sweep read it.
cat >"$t/edit.toml" <<TOML
[job]
command = 'echo "v=\$V loss={n}"; while [ ! -e "$t/go" ]; do sleep 0.05; done'
env = { V = "as-read" }
[sweep]
method = "list"
max_parallel = 1
metric = { name = "loss" }
[sweep.parameters]
n = [0, 1]
TOML
timeout -k 5 60 "$DDL" sweep "$t/edit.toml" -H localhost:1 --dir "$t/edit" -x X=1 >"$t/out" 2>"$t/err" &
sweep=$!
for _ in $(seq 200); do grep -qs "v=as-read" "$t/edit/trial-0000/output.log" && break; sleep 0.05; done
expect_contains "$t/edit/trial-0000/output.log" "v=as-read loss=0"
sed -i 's/as-read/edited/' "$t/edit.toml"
touch "$t/go"
rc=0; wait "$sweep" || rc=$?
[[ $rc == 0 ]] || { cat "$t/err"; fail "the edited sweep: exit $rc"; }
expect_contains "$t/edit/trial-0001/output.log" "v=as-read loss=1"
expect_not_contains "$t/edit/trial-0001/output.log" "edited"
python3 - "$t/edit" "$t/edit.toml" <<'PY'
import json, sys
sweep, job = sys.argv[1], sys.argv[2]
req = json.load(open(f"{sweep}/trial-0001/request.json"))
assert req["version"] == 1 and req["trial"] == 1 and req["attempt"] == 0, req
assert req["job"]["file"] == job and 'V = "as-read"' in req["job"]["toml"], req["job"]
assert req["job"]["options"] == {"env": ["X=1"]}, req["job"]["options"]
assert req["hosts"] == [{"name": "localhost", "slots": 1}] and req["np"] == 1, req
assert req["parameters"] == {"n": 1} and req["env"]["DDL_PARAM_N"] == "1", req
assert req["log_dir"] == f"{sweep}/trial-0001/attempt-0", req
assert req["result"] == f"{sweep}/trial-0001/result.json", req
PY

# 4. A request of another version is refused, naming the file; exit 2.
python3 - "$t/edit/trial-0001/request.json" "$t/v2.json" <<'PY'
import json, sys
req = json.load(open(sys.argv[1])); req["version"] = 2
json.dump(req, open(sys.argv[2], "w"))
PY
expect_exit 2 "$DDL" run --trial "$t/v2.json"
expect_contains "$t/err" "ddl: error: $t/v2.json: not a trial request of version 1: version 2; this ddl reads version 1"
echo PASS
