#!/usr/bin/env bash
# TF_CONFIG: the same cluster on every rank, a unique (type, index) per rank.
source "$(dirname "$0")/common.inc"

cat >"$t/job.toml" <<'TOML'
[job]
command = ["python3", "train.py"]
frameworks = ["tensorflow"]
[hosts]
list = ["w[1-3]:2"]
[tensorflow]
chief = 1
ps = 2
evaluator = 1
port = 5000
TOML

for rank in 0 1 2 3 4 5; do
  expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format tf-config --rank "$rank"
  cp "$t/out" "$t/tf.$rank"
  # The env form carries the very same JSON.
  expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format env --rank "$rank"
  [[ $(env -i bash -c '. "$1" && printf %s "$TF_CONFIG"' _ "$t/out") == "$(cat "$t/tf.$rank")" ]] ||
    fail "TF_CONFIG of rank $rank differs"
done
python3 - "$t" <<'PY'
import json, sys
configs = [json.load(open(f"{sys.argv[1]}/tf.{r}")) for r in range(6)]
clusters = {json.dumps(c["cluster"], sort_keys=True) for c in configs}
assert len(clusters) == 1, clusters
cluster = configs[0]["cluster"]
# The evaluator is not part of the training cluster (TensorFlow's RunConfig
# refuses one there, Kubeflow's TFJob leaves it out); it has its task only.
assert cluster == {"chief": ["w1:5000"], "worker": ["w1:5001", "w2:5000"],
                   "ps": ["w2:5001", "w3:5000"]}, cluster
assert configs[5] == {"cluster": cluster, "task": {"type": "evaluator", "index": 0}}, configs[5]
tasks = [(c["task"]["type"], c["task"]["index"]) for c in configs]
assert len(set(tasks)) == 6, tasks
assert tasks == [("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0), ("ps", 1), ("evaluator", 0)], tasks
PY

# Roles that do not fit the ranks: exit 2.
expect_exit 2 timeout 10 "$DDL" render "$t/job.toml" --format tf-config --rank 0 --np 3
expect_contains "$t/err" "tensorflow roles need 4 ranks"
