#!/usr/bin/env bash
# ddl hosts / render with backend kubernetes: the Ready pods are the hosts.
# kubectl is the TEST DOUBLE tests/fakes/kubectl (no cluster exists here).
source "$(dirname "$0")/common.inc"

cat >"$t/job.toml" <<TOML
[job]
command = ["python3", "train.py"]
[launch]
backend = "kubernetes"
[kubernetes]
selector = "app=trainer"
kubectl = "$DDL_SOURCE_DIR/tests/fakes/kubectl"
TOML
export FAKE_KUBECTL_PODS="$DDL_SOURCE_DIR/tests/fixtures/kubernetes/ready.json"

expect_exit 0 timeout 10 "$DDL" hosts "$t/job.toml" --json
python3 - "$t/out" <<'PY'
import json, sys
hosts = json.load(open(sys.argv[1]))["hosts"]
assert [h["name"] for h in hosts] == ["trainer-1", "trainer-2", "trainer-10"], hosts
assert all(h["source"] == "kubernetes" and h["address"].startswith("10.244.") and h["gpus"] == [0, 1] for h in hosts), hosts
PY

# Hostfiles name the pods (what an rsh agent like kubectl exec needs).
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format hostfile
head -1 "$t/out" | grep -qE '^trainer-1 slots=[0-9]+$' || { cat "$t/out"; fail "pod hostfile"; }
expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --format env --rank 0
grep -qxF "MASTER_ADDR=10.244.1.3" "$t/out" || { cat "$t/out"; fail "MASTER_ADDR is not the pod IP"; }

FAKE_KUBECTL_FAIL=refused expect_exit 3 timeout 10 "$DDL" hosts "$t/job.toml"
