#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# backend = "kubernetes" end to end: discovery, `kubectl exec -i` launch under
# the shim, exit codes, kubectl's own failures, and cleanup after kill -9 of
# ddl. kubectl is the test double tests/fakes/kubectl, which runs the exec'd
# command on this machine as the kubelet would in the pod.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
export FAKE_KUBECTL_PODS="$DDL_SOURCE_DIR/tests/fixtures/kubernetes/ready.json"
export FAKE_KUBECTL_LOG="$t/kubectl.log"
kubectl_double_job "$t/job.toml"
marker="ddlk8s$$x$RANDOM"

# Every rank in its pod (3 pods x 2 slots), env byte for byte, no value in
# any kubectl argument.
odd=$'a \'b\' "$c" \\ d\nnext line'
expect_exit 0 timeout -k 5 60 "$DDL" run "$t/job.toml" -x "ODD=$odd" -- \
  sh -c 'printf "%s %s %s [%s]\n" "$DDL_RANK" "$DDL_WORLD_SIZE" "$DDL_HOST" "$ODD" | tr "\n" "|"; echo'
for r in 0 1; do expect_contains "$t/out" "[$r] $r 6 trainer-1 [a 'b' \"\$c\" \\ d|next line]|"; done
for r in 4 5; do expect_contains "$t/out" "[$r] $r 6 trainer-10 ["; done
expect_contains "$t/kubectl.log" "namespace=ml exec -i trainer-10 -c trainer -- sh -c"
expect_not_contains "$t/kubectl.log" "next line"
expect_not_contains "$t/kubectl.log" "DDL_TOKEN"

# The first failing rank's code passes through; kubectl's own
# "command terminated with exit code" line is not rank output.
expect_exit 7 timeout -k 5 60 "$DDL" run "$t/job.toml" --np 2 -- \
  sh -c 'if [ "$DDL_RANK" = 1 ]; then echo "rank one failing" >&2; exit 7; fi; sleep 30'
expect_contains "$t/err" "rank 1 on trainer-1 exited with code 7"
expect_contains "$t/err" "rank one failing"
expect_not_contains "$t/err" "command terminated with exit code"

# kubectl itself failing: a launch error, exit 3, kubectl's message shown.
FAKE_KUBECTL_FAIL_EXEC=auth expect_exit 3 timeout -k 5 60 "$DDL" run "$t/job.toml" -- true
expect_contains "$t/err" "error: You must be logged in to the server (Unauthorized)"
FAKE_KUBECTL_FAIL_EXEC=notfound expect_exit 3 timeout -k 5 60 "$DDL" run "$t/job.toml" -- true
expect_contains "$t/err" "Error from server (NotFound): pods"
expect_exit 3 timeout -k 5 60 "$DDL" run "$t/job.toml" -- no-such-program-"$marker"
expect_contains "$t/err" "command not found: no-such-program-$marker"

# kill -9 of ddl: kubectl's stdin closes, the shim ends every rank.
ln -s "$(command -v sleep)" "$t/$marker"
"$DDL" run "$t/job.toml" -- "$t/$marker" 60 >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 100); do
  [[ $(pgrep -fc -- "^$t/$marker" || true) == 6 ]] && break
  sleep 0.1
done
[[ $(pgrep -fc -- "^$t/$marker" || true) == 6 ]] || fail "6 ranks did not start: $(cat "$t/err")"
kill -9 "$ddl_pid"
wait "$ddl_pid" 2>/dev/null || true
for _ in $(seq 100); do
  [[ $(pgrep -fc -- "^$t/$marker" || true) == 0 ]] && break
  sleep 0.1
done
left=$(pgrep -fc -- "^$t/$marker" || true)
[[ $left == 0 ]] || fail "$left ranks left after kill -9 of ddl"
echo PASS
