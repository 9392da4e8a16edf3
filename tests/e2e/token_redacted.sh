#!/usr/bin/env bash
# The job token never leaves ddl in rank text it prints: not in the failure
# summary's "last N stderr lines of rank R", not in a rank's torch error
# file shown there or in the --json summary, not in the watchdog's report
# (last lines and stack dumps, on stderr and in --log-dir), not in the logs,
# not even when it straddles the 64 KiB cut of a long line. (issue 27, item 8)
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps.sh installs it)"

# The rank keeps the token in $t/token (a side door, to check ddl's output).
cat >"$t/rank.py" <<'PY'
import json, os, signal, sys, time
token = os.environ["DDL_TOKEN"]
open(sys.argv[1], "w").write(token)
mode = sys.argv[2]
print("DDL_TOKEN=" + token, file=sys.stderr, flush=True)
# A line cut at 64 KiB with the token across the cut.
sys.stderr.write("x" * (65536 - 20) + token + "\n")
sys.stderr.flush()
if mode == "error-file":
    with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w") as f:
        json.dump({"message": {"message": "RuntimeError: token " + token,
                               "extraInfo": {"py_callstack": "Traceback: " + token, "timestamp": "1"}}}, f)
if mode == "stall":
    signal.signal(signal.SIGUSR1, lambda *_: print("dump: " + token, flush=True))
    print("step " + token, flush=True)
    time.sleep(60)
sys.exit(3)
PY

# no_token FILE...: none holds the token.
no_token() {
  local token file
  token=$(cat "$t/token")
  [[ ${#token} -ge 16 ]] || fail "no token seen by the rank"
  for file in "$@"; do
    if grep -qF -- "${token:0:16}" "$file" || grep -qF -- "${token: -16}" "$file"; then
      grep -nF -e "${token:0:16}" -e "${token: -16}" "$file" | cut -c1-200
      fail "the token (or a piece of it) is in $file"
    fi
  done
}

cmd="[\"python3\", \"$t/rank.py\", \"$t/token\""
for mode in plain error-file; do
  printf '[job]\ncommand = %s, "%s", "%s"]\nframeworks = ["torch"]\nlog_dir = "%s"\n' \
    "$cmd" "$mode" "$marker" "$t/logs-$mode" >"$t/job.toml"
  expect_exit 3 timeout -k 2 30 "$DDL" run "$t/job.toml" --np 1
  expect_contains "$t/err" "stderr lines of rank 0:"
  expect_contains "$t/err" "DDL_TOKEN=[redacted]"
  no_token "$t/out" "$t/err" $(ls "$t/logs-$mode"/* | grep -v '\.error\.json$')  # that file is the rank's own
  expect_exit 3 timeout -k 2 30 "$DDL" run "$t/job.toml" --np 1 --json
  no_token "$t/out" "$t/err"
done
expect_contains "$t/out" '"message":"RuntimeError: token [redacted]"'

# The watchdog's report: last lines and the stack dump.
printf '[job]\ncommand = %s, "stall", "%s"]\nlog_dir = "%s"\n[watchdog]\nstall = "1s"\ndump = "SIGUSR1"\ndump_timeout = "1s"\n' \
  "$cmd" "$marker" "$t/logs-stall" >"$t/job.toml"
expect_exit 5 timeout -k 2 30 "$DDL" run "$t/job.toml" --np 1
expect_contains "$t/err" "last line: step [redacted]"
expect_contains "$t/err" "dump: [redacted]"
no_token "$t/out" "$t/err" "$t/logs-stall"/*
expect_none_left 2
echo ok
