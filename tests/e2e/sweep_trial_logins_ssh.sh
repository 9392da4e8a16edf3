#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ddl sweep keeps a host's login (issue 26): -H "root@HOST:2222:2" reaches
# every trial with its user and port (a second sshd on port 2222 of a
# namespace host), not as "HOST:1" with [ssh] user, which here is nobody
# (no shell there: the trial would fail). The dry run and the trial's
# request.json show the typed host.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 1
addr=${NETNS_ADDRS[0]}
netns_second_sshd 0 2222
job=$t/job.toml
{ cat "$NETNS_DIR/ssh.toml"; echo 'user = "nobody"'; } >"$job"
cat >>"$job" <<'TOML'
[job]
command = 'echo "user=$(id -un) port=${SSH_CONNECTION##* } lr={lr} loss=0.{lr}"'
[sweep]
method = "list"
metric = { name = "loss" }
[sweep.parameters]
lr = [1, 2]
TOML

expect_exit 0 ddl_ssh sweep "$job" -H "root@$addr:2222:2" --backend ssh --dry-run
expect_contains "$t/out" "root@$addr:2222:1"
expect_exit 0 ddl_ssh sweep "$job" -H "root@$addr:2222:2" --backend ssh --dir "$t/s"
for trial in 0 1; do
  expect_contains "$t/s/trial-000$trial/output.log" "[0] user=root port=2222 lr=$((trial + 1))"
done
python3 - "$t/s" "$addr" <<'PY'
import json, sys
sweep, addr = sys.argv[1], sys.argv[2]
for trial in (0, 1):
    req = json.load(open(f"{sweep}/trial-000{trial}/request.json"))
    assert req["hosts"] == [{"name": addr, "user": "root", "port": 2222, "slots": 1}], req["hosts"]
    result = json.load(open(f"{sweep}/trial-000{trial}/result.json"))
    assert result["reason"] == "ok", result
    assert result["hosts"] == [{"name": addr, "user": "root", "port": 2222, "slots": 1, "address": addr}], result
PY
echo PASS
