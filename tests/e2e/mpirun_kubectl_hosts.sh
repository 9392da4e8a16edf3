#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# backend = "mpirun" over pods ([kubernetes] selector): mpirun's rsh agent
# (`ddl rsh`) reaches them with kubectl exec, and so must the host questions
# (issue 42): slots = "gpus" takes each pod's GPU limit, as backend
# kubernetes does, and `hosts --check` goes through kubectl exec, never over
# ssh (both went over ssh: "cannot probe the GPUs of every host: trainer-1:
# cannot connect"). kubectl
# is the TEST DOUBLE tests/fakes/kubectl; the pods' addresses are loopback
# ones and [ssh] port 1, so that an ssh attempt fails at once and reaches
# nothing.
source "$(dirname "$0")/common.inc"

sed 's/10\.244\.[0-9]*\.\([0-9]*\)/127.0.0.\1/g' "$DDL_SOURCE_DIR/tests/fixtures/kubernetes/ready.json" >"$t/pods.json"
export FAKE_KUBECTL_PODS="$t/pods.json"
export FAKE_KUBECTL_LOG="$t/kubectl.log"
cat >"$t/job.toml" <<TOML
[job]
command = ["true"]
[launch]
backend = "mpirun"
[hosts]
slots = "gpus"
[kubernetes]
namespace = "ml"
selector = "app=trainer"
container = "trainer"
kubectl = "$DDL_SOURCE_DIR/tests/fakes/kubectl"
[ssh]
port = 1
connect_timeout = "2s"
TOML

# slots = "gpus": the pods' own GPU limits (2 each), no ssh probe.
expect_exit 0 timeout 30 "$DDL" hosts "$t/job.toml" --json
python3 - "$t/out" <<'PY'
import json, sys
hosts = json.load(open(sys.argv[1]))["hosts"]
assert [h["name"] for h in hosts] == ["trainer-1", "trainer-2", "trainer-10"], hosts
assert all(h["source"] == "kubernetes" and h["slots"] == 2 and h["gpus"] == [0, 1] for h in hosts), hosts
PY
expect_not_contains "$t/err" "refused"
expect_contains "$t/kubectl.log" "namespace=ml get pods -l app=trainer"

# --check: through kubectl exec, as with backend kubernetes
# (hosts_check_kubectl.sh), never tried over ssh.
expect_exit 0 timeout 30 "$DDL" hosts "$t/job.toml" --check
for pod in trainer-1 trainer-2 trainer-10; do
  grep -qE "^$pod +127\.0\.0\.[0-9]+ +yes +[0-9][^ ]* +[0-9]+ +-$" "$t/out" ||
    { cat "$t/out"; fail "--check of pod $pod"; }
  expect_contains "$t/kubectl.log" "namespace=ml exec -i $pod -c trainer -- sh -c"
done
expect_not_contains "$t/out" "connect"
