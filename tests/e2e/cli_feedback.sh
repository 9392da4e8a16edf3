#!/usr/bin/env bash
# --json everywhere (errors as events on stdout, run --dry-run's plan) and
# what -v / -vv show (hosts, backend, interfaces, ports, each rank's command;
# the token redacted).
source "$(dirname "$0")/common.inc"

# run --dry-run --json: the plan, as render --format json prints it.
expect_exit 0 timeout 20 "$DDL" run --dry-run --json --np 2 -- echo hi
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["world_size"] == 2 and [r["rank"] for r in doc["ranks"]] == [0, 1], doc
assert doc["ranks"][0]["command"] == ["echo", "hi"], doc' "$t/out"

# Every error is a JSON event on stdout with --json; job-file errors are split
# into file, line, column and message. stderr keeps the text.
printf '[job]\ncomand = ["true"]\n[hosts]\nslots = 0\n' >"$t/bad.toml"
expect_exit 2 timeout 10 "$DDL" run "$t/bad.toml" --json
expect_contains "$t/err" "ddl: error: $t/bad.toml:2:1: unknown key 'comand' in [job]; did you mean 'command'?"
python3 - "$t/out" "$t/bad.toml" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
event = json.loads(lines[0])
assert list(event)[:2] == ["event", "time"] and event["event"] == "error", event
assert event["exit_code"] == 2, event
assert event["errors"] == [
    {"file": sys.argv[2], "line": 2, "column": 1, "message": "unknown key 'comand' in [job]; did you mean 'command'?"},
    {"file": sys.argv[2], "line": 4, "column": 9, "message": "hosts.slots: must be between 1 and 1000000"},
], event
PY
for args in "hosts -H a:0 --json" "render --json --format env" "run --json --nnodes 2 -- true" \
    "run --json --hsots a -- true" "frob --json"; do
  expect_exit 2 timeout 10 "$DDL" $args
  python3 -c '
import json, sys
e = json.loads(open(sys.argv[1]).read())
assert e["event"] == "error" and e["exit_code"] == 2 and e["message"], e' "$t/out" || fail "ddl $args: $(cat "$t/out")"
done
# A launch error (exit 3): the summary event, as before, then the error event.
expect_exit 3 timeout 20 "$DDL" run --json --np 1 -- /nonexistent/cmd
expect_contains "$t/out" '"event":"summary"'
expect_contains "$t/out" '"event":"error","time":'
expect_contains "$t/out" '"exit_code":3,"message":"rank 0 on localhost: cannot execute /nonexistent/cmd: No such file or directory"'

# -v: the backend, each host with its source and address, the interface, the
# ports and each rank's command; -vv adds each rank's environment, token redacted.
expect_exit 0 timeout 20 "$DDL" run --np 2 -v -- echo hi
expect_contains "$t/err" "ddl: info: backend: local (auto: every host is this machine)"
expect_contains "$t/err" "ddl: info: host localhost: address 127.0.0.1, 2 slots, GPUs "
expect_contains "$t/err" "from local"
expect_contains "$t/err" "ddl: info: host localhost: interface lo (127.0.0.1)"
expect_contains "$t/err" "ddl: info: ports: MASTER_PORT "
expect_contains "$t/err" "ddl: info: rank 1 on localhost: in $PWD: echo hi"
expect_not_contains "$t/err" "ddl: debug:"
expect_exit 0 timeout 20 "$DDL" run --np 1 -vv -- sh -c 'echo "$DDL_TOKEN" >"$0"' "$t/token"
token=$(cat "$t/token")
[[ ${#token} -ge 16 ]] || fail "no token reached the rank"
expect_contains "$t/err" "ddl: debug: rank 0 env DDL_TOKEN=[redacted]"
expect_not_contains "$t/err" "$token"
# Without -v nothing of this.
expect_exit 0 timeout 20 "$DDL" run --np 1 -- true
[[ ! -s $t/err ]] || { cat "$t/err"; fail "stderr without -v"; }
