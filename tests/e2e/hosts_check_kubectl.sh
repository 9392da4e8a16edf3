#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ddl hosts --check with backend kubernetes (issue 42): each pod is reached
# with kubectl exec (the job's context, namespace and container) and reports
# the ddl there (--version) and its GPUs (nvidia-smi -L); a pod that kubectl
# cannot exec into is unreachable with kubectl's words, exit 3. kubectl is
# the TEST DOUBLE tests/fakes/kubectl (it runs the pod's command here), and
# nvidia-smi a double with 2 GPUs on the PATH the pods see.
source "$(dirname "$0")/common.inc"

fake_nvidia_smi "$t/bin" 2
export PATH="$t/bin:$PATH"
export FAKE_KUBECTL_PODS="$DDL_SOURCE_DIR/tests/fixtures/kubernetes/ready.json"
export FAKE_KUBECTL_LOG="$t/kubectl.log"
cat >"$t/job.toml" <<TOML
[job]
command = ["true"]
[launch]
backend = "kubernetes"
[kubernetes]
namespace = "ml"
context = "lab"
selector = "app=trainer"
container = "trainer"
kubectl = "$DDL_SOURCE_DIR/tests/fakes/kubectl"
TOML
version=$("$DDL" --version | head -n 1)
version=${version#ddl }

# Every pod reached: its ddl's version and 2 GPUs, exit 0.
expect_exit 0 timeout 60 "$DDL" hosts "$t/job.toml" --check
for pod in trainer-1 trainer-2 trainer-10; do
  grep -qE "^$pod +10\.244\.[0-9.]+ +yes +${version//./\\.} +2 +-$" "$t/out" || { cat "$t/out"; fail "--check of pod $pod"; }
  expect_contains "$t/kubectl.log" "context=lab namespace=ml exec -i $pod -c trainer -- sh -c"
done

expect_exit 0 timeout 60 "$DDL" hosts "$t/job.toml" --check --json
python3 - "$t/out" "$version" <<'PY'
import json, sys
hosts = json.load(open(sys.argv[1]))["hosts"]
assert [h["name"] for h in hosts] == ["trainer-1", "trainer-2", "trainer-10"], hosts
for h in hosts:
    assert (h["reachable"], h["ddl_version"], h["gpu_count"], h["error"]) == (True, sys.argv[2], 2, None), h
PY

# A pod that kubectl cannot exec into (deleted since it was listed): not
# reachable, with kubectl's error; the others still checked; exit 3.
export FAKE_KUBECTL_GONE=trainer-2
expect_exit 3 timeout 60 "$DDL" hosts "$t/job.toml" --check
grep -qE '^trainer-2 +10\.244\.[0-9.]+ +no +- +- +Error from server \(NotFound\): pods "trainer-2" not found$' "$t/out" ||
  { cat "$t/out"; fail "--check of the pod kubectl cannot exec into"; }
for pod in trainer-1 trainer-10; do
  grep -qE "^$pod +10\.244\.[0-9.]+ +yes +${version//./\\.} +2 +-$" "$t/out" || { cat "$t/out"; fail "--check of pod $pod"; }
done

expect_exit 3 timeout 60 "$DDL" hosts "$t/job.toml" --check --json
python3 - "$t/out" "$version" <<'PY'
import json, sys
hosts = {h["name"]: h for h in json.load(open(sys.argv[1]))["hosts"]}
gone = hosts.pop("trainer-2")
assert (gone["reachable"], gone["ddl_version"], gone["gpu_count"]) == (False, None, None), gone
assert gone["error"] == 'Error from server (NotFound): pods "trainer-2" not found', gone
for h in hosts.values():
    assert (h["reachable"], h["ddl_version"], h["gpu_count"], h["error"]) == (True, sys.argv[2], 2, None), h
PY
