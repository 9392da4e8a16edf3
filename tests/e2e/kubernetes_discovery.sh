#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# backend = "kubernetes": the hosts are the pods kubectl lists (through the
# kubectl test double, tests/fakes/kubectl, fed real `get pods -o json` lists).
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
fixtures="$DDL_SOURCE_DIR/tests/fixtures/kubernetes"
cat >"$t/job.toml" <<TOML
[launch]
backend = "kubernetes"
[kubernetes]
namespace = "ml"
selector = "app=trainer"
context = "test-ctx"
kubectl = "$DDL_SOURCE_DIR/tests/fakes/kubectl"
TOML
export FAKE_KUBECTL_LOG="$t/kubectl.log"
pods() { FAKE_KUBECTL_PODS="$fixtures/$1" timeout 20 "${@:2}"; }

# Running and Ready pods, in name order (trainer-2 before trainer-10), IP as
# address, slots = the nvidia.com/gpu limit (and the labels of the pod's node:
# kubernetes_node_labels.sh).
expect_exit 0 pods ready.json "$DDL" hosts "$t/job.toml" --json
python3 - "$t/out" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
assert all(h.pop("labels")["kubernetes.io/hostname"] == "gpu-node-1" for h in document["hosts"]), document
want = '{"hosts":[{"name":"trainer-1","address":"10.244.1.3","slots":2,"gpus":[0,1],"source":"kubernetes"},{"name":"trainer-2","address":"10.244.1.4","slots":2,"gpus":[0,1],"source":"kubernetes"},{"name":"trainer-10","address":"10.244.1.12","slots":2,"gpus":[0,1],"source":"kubernetes"}]}'
assert document == json.loads(want), document
PY
expect_contains "$t/kubectl.log" "context=test-ctx namespace=ml get pods -l app=trainer -o json"

# Pods that are not ready are skipped, each with its reason.
expect_exit 0 pods mixed.json "$DDL" hosts "$t/job.toml"
expect_contains "$t/out" "trainer-0  10.244.1.3  4      0,1,2,3  kubernetes"
expect_contains "$t/err" "5 pod(s) matching selector 'app=trainer' in namespace 'ml' (context 'test-ctx') skipped, not ready:"
expect_contains "$t/err" "  trainer-1: phase Pending"
expect_contains "$t/err" "  trainer-2: not Ready (ContainersNotReady: containers with unready status: [trainer])"
expect_contains "$t/err" "  trainer-3: no pod IP yet"
expect_contains "$t/err" "  trainer-4: terminating"
expect_contains "$t/err" "  trainer-5: phase Failed (Evicted)"

# Without a GPU limit: [hosts] slots, else 1.
expect_exit 0 pods no-gpu.json "$DDL" hosts "$t/job.toml"
expect_contains "$t/out" "trainer-1  10.244.1.4  1      -        kubernetes"
printf '[hosts]\nslots = 3\n' >>"$t/job.toml"
expect_exit 0 pods no-gpu.json "$DDL" hosts "$t/job.toml" --json
expect_contains "$t/out" '{"name":"trainer-0","address":"10.244.1.3","slots":3,"gpus":[],"source":"kubernetes",'
expect_contains "$t/out" '{"name":"multi-0","address":"10.244.1.9","slots":4,'

# None ready, none at all, a fractional GPU limit, kubectl failing: exit 3.
expect_exit 3 pods pending.json "$DDL" hosts "$t/job.toml"
expect_contains "$t/err" "ddl: error: no pod matching selector 'app=trainer' in namespace 'ml' (context 'test-ctx') is Running and Ready:"
expect_contains "$t/err" "  trainer-1: phase Pending"
expect_exit 3 pods empty.json "$DDL" hosts "$t/job.toml"
expect_contains "$t/err" "ddl: error: no pods match selector 'app=trainer' in namespace 'ml' (context 'test-ctx')"
expect_exit 3 pods fractional.json "$DDL" hosts "$t/job.toml"
expect_contains "$t/err" "ddl: error: pod trainer-0: nvidia.com/gpu limit quantity '500m' is not a whole number"
FAKE_KUBECTL_FAIL=auth expect_exit 3 pods ready.json "$DDL" hosts "$t/job.toml"
expect_contains "$t/err" "failed: error: You must be logged in to the server (Unauthorized)"
sed -i "s|^kubectl = .*|kubectl = \"$t/no-such-kubectl\"|" "$t/job.toml"
expect_exit 3 pods ready.json "$DDL" hosts "$t/job.toml"
expect_contains "$t/err" "cannot run $t/no-such-kubectl: No such file or directory"

# The plan over pods (render uses the same discovery).
sed -i "s|^kubectl = .*|kubectl = \"$DDL_SOURCE_DIR/tests/fakes/kubectl\"|" "$t/job.toml"
expect_exit 0 pods ready.json "$DDL" render "$t/job.toml" --format hostfile
expect_contains "$t/out" "trainer-10 slots=2"
echo PASS
