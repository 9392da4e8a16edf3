#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The backend contract (backend_contract.inc) on the kubernetes backend:
# 6 ranks in 3 pods (2 slots each) through `kubectl exec -i`, where kubectl
# is the test double tests/fakes/kubectl (it runs the exec'd command on this
# machine, as the kubelet would in the pod). Its log is checked after every
# case: one `exec` per rank, into the pod the plan gives it.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/backend_contract.inc"
export FAKE_KUBECTL_PODS="$DDL_SOURCE_DIR/tests/fixtures/kubernetes/ready.json"
export FAKE_KUBECTL_LOG="$t/kubectl.log"
# Under $t, so that a kubectl left running is found like any rank process.
ln -s "$DDL_SOURCE_DIR/tests/fakes/kubectl" "$t/kubectl"
contract_base=$t/base.toml
cat >"$contract_base" <<TOML
[launch]
backend = "kubernetes"
[kubernetes]
namespace = "ml"
selector = "app=trainer"
container = "trainer"
kubectl = "$t/kubectl"
TOML
contract_world=6

# The fake's record: every pod got its ranks through `kubectl exec -i`
# (trainer-1 holds ranks 0-1, trainer-2 2-3, trainer-10 4-5; a preflight
# check may add one exec per pod), into no other pod.
expect_execs() {
  local what=$1 pod got
  grep "^context=" "$t/kubectl.log" >"$t/kubectl.cmds" || true
  for pod in trainer-1 trainer-2 trainer-10; do
    got=$(grep -c "^context= namespace=ml exec -i $pod -c trainer -- sh -c " "$t/kubectl.cmds" || true)
    ((got >= 2)) || { cat "$t/kubectl.cmds"; fail "$what: $got kubectl exec into $pod, want its 2 ranks"; }
  done
  if grep -v -e "^context= namespace=ml exec -i trainer-\(1\|2\|10\) -c trainer -- sh -c " \
       -e "^context= namespace=ml get pods -l app=trainer -o json$" "$t/kubectl.cmds"; then
    fail "$what: kubectl commands other than get pods and exec into the job's pods (above)"
  fi
  : >"$t/kubectl.log"
}

: >"$t/kubectl.log"
contract_after_case() { expect_execs "$1"; }
contract_run_all
