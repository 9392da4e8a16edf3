#!/usr/bin/env bash
# Real TensorFlow (issue 39): a Keras model trained with
# MultiWorkerMirroredStrategy from ddl's TF_CONFIG, one rank on each of 4
# namespace hosts over ssh, 2 epochs: every worker sees 4 replicas and ends
# with the same weights. success = "all": every rank must end (with the
# default "chief", the chief's end would stop workers still printing).
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(framework_python tensorflow)
script=$DDL_SOURCE_DIR/tests/fixtures/clients/tf_multiworker.py
netns_up 4
job=$t/job.toml
cat >"$job" <<TOML
[job]
frameworks = ["tensorflow"]
command = ["$python", "$script"]
grace = "2s"
env = { TF_CPP_MIN_LOG_LEVEL = "3", CUDA_VISIBLE_DEVICES = "" }
[tensorflow]
success = "all"
TOML
cat "$NETNS_DIR/ssh.toml" >>"$job"
DDL_TIMEOUT=400 expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 1)" --backend ssh
for role in "chief 0" "worker 0" "worker 1" "worker 2"; do
  expect_contains "$t/out" "$role: replicas 4 weights "
done
hashes=$(grep -o 'weights [0-9a-f]*' "$t/out" | sort -u)
[[ $(wc -l <<<"$hashes") == 1 ]] || { cat "$t/out"; fail "the workers ended with different weights: $hashes"; }
echo "ok: MultiWorkerMirroredStrategy on 4 hosts, 4 replicas, one set of weights ($hashes)"
