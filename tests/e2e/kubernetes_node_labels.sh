#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Pods carry the labels of their nodes: one `kubectl get nodes NAME... -o json`
# for the nodes the pods run on, read only when [placement] uses labels or
# for `ddl hosts`; a [placement] that needs them stops with kubectl's words
# when RBAC forbids reading nodes. kubectl is the TEST DOUBLE
# tests/fakes/kubectl (no cluster exists here); its nodes are
# tests/fixtures/kubernetes/nodes.json: gpu-node-1 and -3 in us-east-1a,
# gpu-node-2 in us-east-1b; zones.json puts trainer-1, -2, -10 on them.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
export FAKE_KUBECTL_PODS="$DDL_SOURCE_DIR/tests/fixtures/kubernetes/zones.json"
export FAKE_KUBECTL_LOG="$t/kubectl.log"
cat >"$t/job.toml" <<TOML
[launch]
backend = "kubernetes"
[kubernetes]
namespace = "ml"
selector = "app=trainer"
kubectl = "$DDL_SOURCE_DIR/tests/fakes/kubectl"
TOML
{ cat "$t/job.toml"; printf '[placement]\nconstraints = { "topology.kubernetes.io/zone" = "us-east-1a" }\n'; } >"$t/zone.toml"
{ cat "$t/job.toml"; printf '[placement]\norder = "topology.kubernetes.io/zone"\n'; } >"$t/order.toml"

# ddl hosts --json: each pod with its node's labels, from one kubectl call.
expect_exit 0 timeout 10 "$DDL" hosts "$t/job.toml" --json
python3 - "$t/out" <<'PY'
import json, sys
hosts = {h["name"]: h for h in json.load(open(sys.argv[1]))["hosts"]}
zones = {name: h["labels"]["topology.kubernetes.io/zone"] for name, h in hosts.items()}
assert zones == {"trainer-1": "us-east-1a", "trainer-2": "us-east-1b", "trainer-10": "us-east-1a"}, zones
assert hosts["trainer-2"]["labels"]["node.kubernetes.io/instance-type"] == "p3dn.24xlarge", hosts
assert hosts["trainer-10"]["labels"]["kubernetes.io/hostname"] == "gpu-node-3", hosts
PY
[[ $(grep -c "get nodes" "$t/kubectl.log") == 1 ]] || { cat "$t/kubectl.log"; fail "not one kubectl get nodes"; }
expect_contains "$t/kubectl.log" "get nodes -o json -- gpu-node-1 gpu-node-2 gpu-node-3"

# A constraint on a node label: only the pods in that zone get ranks, and
# ddl hosts says why the other is left out.
expect_exit 0 timeout 10 "$DDL" render "$t/zone.toml" --format hostfile
[[ $(cat "$t/out") == $'trainer-1 slots=2\ntrainer-10 slots=2' ]] || { cat "$t/out"; fail "zone constraint"; }
expect_exit 0 timeout 10 "$DDL" hosts "$t/zone.toml"
grep -E '^trainer-2 .*constraint topology.kubernetes.io/zone=us-east-1a: has topology.kubernetes.io/zone=us-east-1b$' \
  "$t/out" >/dev/null || { cat "$t/out"; fail "trainer-2 not excluded with its reason"; }
# The LABELS cell: the label [placement] names first, three in all, the
# other five counted (--json has them all).
grep -E '^trainer-2 .* topology\.kubernetes\.io/zone=us-east-1b beta\.kubernetes\.io/arch=[^ ]+ kubernetes\.io/arch=[^ ]+ \+5 more +constraint ' \
  "$t/out" >/dev/null || { cat "$t/out"; fail "trainer-2's labels cell"; }
# Real ranks in the pods (kubectl exec of the test double) land there too.
expect_exit 0 timeout -k 5 60 "$DDL" run "$t/zone.toml" -- sh -c 'echo "on $DDL_HOST"'
[[ $(grep -c "on trainer-1$" "$t/out") == 2 && $(grep -c "on trainer-10$" "$t/out") == 2 ]] || { cat "$t/out"; fail "ranks"; }
expect_not_contains "$t/out" "trainer-2"

# order by zone: the two us-east-1a pods adjacent, then us-east-1b.
expect_exit 0 timeout 10 "$DDL" render "$t/order.toml" --format hostfile
[[ $(cut -d' ' -f1 "$t/out" | tr '\n' ' ') == "trainer-1 trainer-10 trainer-2 " ]] || { cat "$t/out"; fail "order"; }

# A job that uses no labels pays no kubectl get nodes.
: >"$t/kubectl.log"
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format hostfile
expect_not_contains "$t/kubectl.log" "get nodes"

# RBAC forbids reading nodes: a [placement] that uses labels stops (exit 3)
# with kubectl's own words; no rank starts.
export FAKE_KUBECTL_FAIL_NODES=forbidden
for job in zone order; do
  expect_exit 3 timeout -k 5 30 "$DDL" run "$t/$job.toml" -- sh -c 'echo "rank ran"'
  expect_contains "$t/err" "ddl: error: [placement] uses host labels (constraints or order), but the labels of the nodes of the pods matching selector 'app=trainer' in namespace 'ml' could not be read: kubectl get nodes failed: Error from server (Forbidden): nodes \"gpu-node-3\" is forbidden: User \"system:serviceaccount:ml:default\" cannot get resource \"nodes\" in API group \"\" at the cluster scope; allow this user to get nodes (RBAC: get on the cluster-scoped resource \"nodes\"), or take the labels out of [placement]"
  expect_not_contains "$t/out" "rank ran"
done
expect_exit 3 timeout 10 "$DDL" hosts "$t/zone.toml"
# ddl hosts without label constraints lists the pods and says the labels are missing.
expect_exit 0 timeout 10 "$DDL" hosts "$t/job.toml" --json
expect_contains "$t/err" "ddl: warning: pods shown without their node labels: kubectl get nodes failed: Error from server (Forbidden)"
# The JSON says so too, for a script that does not read stderr.
python3 -c 'import json,sys; hs=json.load(open(sys.argv[1]))["hosts"]; assert len(hs)==3 and all("labels" not in h and h["labels_error"].startswith("kubectl get nodes failed: Error from server (Forbidden)") for h in hs), hs' "$t/out"
# A plain launch does not ask, so RBAC on nodes does not matter to it.
expect_exit 0 timeout -k 5 60 "$DDL" run "$t/job.toml" --np 1 -- true
expect_not_contains "$t/err" "nodes"
