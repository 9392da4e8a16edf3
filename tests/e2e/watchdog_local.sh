#!/usr/bin/env bash
# The hang watchdog ([watchdog], issue 17) on local ranks: a real Python rank
# that stops printing is dumped (faulthandler on SIGUSR1) and ended with
# exit 5 within stall + 1 s, the summary names the ranks and their last
# lines, --log-dir keeps the report; a heartbeat from the shell (`ddl
# heartbeat`) keeps a silent rank alive; a straggler is named.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
command -v python3 >/dev/null || skip "python3 not installed"

cat >"$t/hang.py" <<'PY'
import faulthandler, signal, sys, time
faulthandler.register(signal.SIGUSR1, all_threads=True)
for step in range(3):
    time.sleep(0.1)
    print(f"step {step}", flush=True)
with open(sys.argv[1], "a") as f:  # when the last progress was made
    f.write(f"{time.time()}\n")
time.sleep(60)
PY
cat >"$t/stall.toml" <<TOML
[job]
command = ["python3", "$t/hang.py", "$t/last", "$marker"]
log_dir = "$t/logs"
[watchdog]
stall = "2s"
progress = "step \\\\d+"
dump = "SIGUSR1"
dump_timeout = "10s"
TOML

# stamp: ddl's stderr lines with the time each arrived.
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done; }

got=0
timeout -k 5 40 "$DDL" run "$t/stall.toml" --np 2 >"$t/out" 2> >(stamp >"$t/err") || got=$?
end=$(date +%s.%N)
sleep 0.5  # the stamping reader finishes
[[ $got == 5 ]] || { cat "$t/out" "$t/err"; fail "stall: exit $got, want 5"; }
grep -qE "ddl: watchdog: no rank made progress for 2(\.[0-9]+)?s \(watchdog.stall = 2s\)" "$t/err" || fail "no stall announcement"
expect_contains "$t/err" "ddl: error: stalled ranks: 0-1"
expect_contains "$t/err" "ddl: rank 0 on localhost: last line: step 2"
expect_contains "$t/err" "ddl: rank 1 on localhost: last line: step 2"
expect_contains "$t/err" "ddl: stack dump of rank 1"
expect_contains "$t/err" "hang.py\", line 8 in <module>"
expect_contains "$t/logs/watchdog.attempt-0.log" "stalled ranks: 0-1"
expect_contains "$t/logs/watchdog.attempt-0.log" "hang.py\", line 8 in <module>"
expect_contains "$t/logs/rank-0.attempt-0.log" "most recent call first"
last=$(sort -n "$t/last" | tail -1)
announced=$(grep -aF "ddl: watchdog:" "$t/err" | head -1 | cut -d' ' -f1)
python3 - "$last" "$announced" "$end" <<'PY' || fail "too slow"
import sys
last, announced, end = map(float, sys.argv[1:])
print(f"detected {announced - last:.2f}s after the last progress; ended {end - last:.2f}s after it")
assert announced - last <= 2 + 1, "dump later than stall + 1 s"
assert end - last <= 2 + 3, "end later than stall + 3 s"
PY
expect_none_left 2

# A silent rank that sends a heartbeat from the shell every 0.5 s for 4 s
# outlives a 2 s stall; exit 0. A wrong token is refused (exit 3).
cat >"$t/beat.toml" <<TOML
[job]
command = "for i in 1 2 3 4 5 6 7 8; do '$DDL' heartbeat || exit 9; $nap 0.5; done"
[watchdog]
stall = "2s"
progress = "heartbeat"
TOML
start=$SECONDS
expect_exit 0 timeout -k 5 30 "$DDL" run "$t/beat.toml" --np 2
(( SECONDS - start >= 4 )) || fail "heartbeat job ended early"
cat >"$t/badbeat.toml" <<TOML
[job]
command = "DDL_TOKEN=0000 '$DDL' heartbeat; echo \"heartbeat exit \$?\""
TOML
expect_exit 0 timeout -k 5 30 "$DDL" run "$t/badbeat.toml" --np 1
expect_contains "$t/out" "heartbeat exit 3"
expect_contains "$t/err" "authentication failed"
expect_exit 2 env -u DDL_RENDEZVOUS "$DDL" heartbeat
expect_contains "$t/err" "DDL_RENDEZVOUS"

# Without heartbeats the same silent rank stalls (the control).
cat >"$t/nobeat.toml" <<TOML
[job]
command = ["$nap", "30"]
[watchdog]
stall = "1s"
progress = "heartbeat"
dump = "SIGUSR2"
dump_timeout = "1s"
TOML
expect_exit 5 timeout -k 5 30 "$DDL" run "$t/nobeat.toml" --np 1
expect_contains "$t/err" "ddl: rank 0 on localhost: last line: (none)"
expect_none_left 2

# A straggler: ranks 0 and 1 print every 0.2 s, rank 2 stops after one line.
cat >"$t/straggle.toml" <<TOML
[job]
command = "if [ \"\$DDL_RANK\" = 2 ]; then echo 'step 0'; exec $nap 30; fi; i=0; while [ \$i -lt 60 ]; do echo \"step \$i\"; i=\$((i+1)); $nap 0.2; done"
[watchdog]
stall = "30s"
straggler = "2s"
dump = "SIGUSR2"
dump_timeout = "1s"
TOML
expect_exit 5 timeout -k 5 30 "$DDL" run "$t/straggle.toml" --np 3 --json
expect_contains "$t/err" "ddl: watchdog: rank 2 made no progress for"
expect_contains "$t/err" "ddl: error: straggling rank: 2"
expect_contains "$t/err" "ddl: rank 2 on localhost: last line: step 0"
expect_contains "$t/out" '"result":"stalled"'
expect_contains "$t/out" '"stalled_ranks":[2]'
expect_none_left 2
