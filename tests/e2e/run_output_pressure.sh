#!/usr/bin/env bash
# Output under pressure (issue 14): a rank's endless line or progress bar does
# not grow ddl; a stdout nobody reads does not keep Ctrl-C from ending the job
# within grace; a full --log-dir is said once (exit 3 only with --strict-logs);
# the job token never appears in what ddl prints, logs or sends as events.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

# 1. 200 MB without a newline: ddl's peak RSS stays far below that.
command -v /usr/bin/time >/dev/null || skip "/usr/bin/time is not installed"
timeout -k 5 60 /usr/bin/time -v -o "$t/time" "$DDL" run --np 1 -- \
  sh -c 'head -c 200000000 /dev/zero | tr "\0" x' >"$t/big" 2>"$t/err" || fail "exit $? on a 200 MB line"
rss_kib=$(awk -F: '/Maximum resident set size/ {print $2 + 0}' "$t/time")
((rss_kib < 64 * 1024)) || fail "ddl's peak RSS was ${rss_kib} KiB for a 200 MB line"
[[ $(sed -E 's/^\[0\+?\] //' "$t/big" | tr -d '\n' | wc -c) == 200000000 ]] || fail "bytes lost"
[[ $(grep -c '^\[0+\] ' "$t/big") == $((200000000 / 65536)) ]] || fail "partial pieces not marked"

# 2. A progress bar on a terminal: each '\r' update passes through at once.
if have script bsdutils; then
  script -qfec "$DDL run --np 1 -- sh -c 'for i in 1 2 3; do printf \"\\r%d%%\" \$i; sleep 0.2; done; echo'" \
    /dev/null >"$t/tty" || fail "progress run failed"
  grep -q $'\[0\] 1%\r' "$t/tty" || { od -c "$t/tty" | head; fail "no '\\r' update passed through"; }
  grep -q $'\[0\] 3%\r' "$t/tty" || fail "last update missing"
fi

# 3. ddl's stdout is a FIFO that nobody reads: Ctrl-C still ends the job in grace.
mkfifo "$t/fifo"
"$nap" 120 <>"$t/fifo" &
holder=$!
printf '[job]\ncommand = ["sh", "-c", "yes flood of output & exec %s 300"]\ngrace = "2s"\n' "$nap" >"$t/flood.toml"
"$DDL" run "$t/flood.toml" --np 2 >"$t/fifo" 2>"$t/err2" &
ddl=$!
sleep 2
kill -INT "$ddl"
start=$(date +%s%N)
code=0
timeout 10 tail --pid="$ddl" -f /dev/null || fail "ddl still running 10 s after Ctrl-C"
wait "$ddl" || code=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
kill "$holder" 2>/dev/null || true
[[ $code == 130 ]] || { cat "$t/err2"; fail "exit $code after Ctrl-C with a stuck stdout, want 130"; }
((elapsed_ms < 6000)) || fail "Ctrl-C took ${elapsed_ms} ms with a stuck stdout (grace 2s)"
expect_none_left 3

# 4. --log-dir runs out of space (a 1 MiB tmpfs): said once, exit 3 only when strict.
if [[ $(id -u) == 0 ]] && mkdir "$t/logs" && mount -t tmpfs -o size=1m,mode=0755 tmpfs "$t/logs" 2>/dev/null; then
  trap 'umount "$t/logs" 2>/dev/null; cleanup_marked; rm -rf "$t"' EXIT
  spill='head -c 3000000 /dev/zero | tr "\0" "y" | fold -w 100'
  expect_exit 0 timeout -k 5 30 "$DDL" run --np 1 --log-dir "$t/logs" -- sh -c "$spill"
  [[ $(grep -c 'No space left on device' "$t/err") == 2 ]] || { cat "$t/err"; fail "want the warning once and the summary"; }
  expect_contains "$t/err" "the rank logs are incomplete: cannot write $t/logs/rank-0.attempt-0.log"
  [[ $(wc -l <"$t/out") == 30000 ]] || fail "terminal output lost with a full log dir"
  rm -f "$t/logs"/*
  expect_exit 3 timeout -k 5 30 "$DDL" run --np 1 --strict-logs --log-dir "$t/logs" -- sh -c "$spill"
  expect_contains "$t/err" "(strict logs: ddl will exit 3)"
  rm -f "$t/logs"/*
  printf '%s\n' "$spill" >"$t/spill.sh"
  printf '[job]\ncommand = ["sh", "%s"]\nlog_dir = "%s"\nstrict_logs = true\n' "$t/spill.sh" "$t/logs" >"$t/strict.toml"
  expect_exit 3 timeout -k 5 30 "$DDL" run "$t/strict.toml" --np 1
fi

# 5. The token is redacted from printed lines, log files and JSON events.
show='echo "token=$DDL_TOKEN"; echo "err $DDL_TOKEN" >&2'
expect_exit 0 "$DDL" run --np 1 --log-dir "$t/tok" -- sh -c "$show"
expect_contains "$t/out" "[0] token=[redacted]"
expect_contains "$t/err" "[0] err [redacted]"
expect_contains "$t/tok/rank-0.attempt-0.log" "token=[redacted]"
expect_exit 0 "$DDL" run --np 1 --json -- sh -c "$show"
expect_contains "$t/out" '"line":"token=[redacted]"'
grep -qE '[0-9a-f]{64}' "$t/out" "$t/err" "$t/tok/rank-0.attempt-0.log" && fail "a token leaked"
true
