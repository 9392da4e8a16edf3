#!/usr/bin/env bash
# Issue 27: an elastic job (--np MIN:MAX) on the local backend re-plans after
# a failed attempt on the same backend. Its shutdown used to stop the I/O
# thread that reaps the ranks for good, so the next attempt's ranks were never
# reported as ended: ddl hung after "restarting" and ignored SIGTERM. Each run
# is bounded by `timeout` (exit 124/137 would be the hang); each asserts the
# exit code, what the ranks printed and that none of them is left running.
source "$(dirname "$0")/common.inc"
rank=$t/rank.sh
# Rank 1 fails in attempt 0 (in every attempt with $t/fail_always); with
# $t/linger, attempt 1's ranks say so and sleep.
cat >"$rank" <<SH
#!/bin/bash
echo "rank \$DDL_RANK of \$DDL_WORLD_SIZE attempt \$DDL_ATTEMPT"
if [[ \$DDL_RANK == 1 && (\$DDL_ATTEMPT == 0 || -e $t/fail_always) ]]; then exit 7; fi
[[ -e $t/linger && \$DDL_ATTEMPT == 1 ]] && { touch "$t/linger.\$DDL_RANK"; exec sleep 60; }
sleep 0.5
SH
chmod +x "$rank"
left_running() { pgrep -f -- "$rank" || true; }

# 1. Rank 1 fails once: the job re-plans on localhost and attempt 1 ends well.
expect_exit 0 timeout -k 2 30 "$DDL" run -H localhost:2 --np 1:2 --max-restarts 1 "$rank"
expect_contains "$t/out" "[0] rank 0 of 2 attempt 1"
expect_contains "$t/out" "[1] rank 1 of 2 attempt 1"
expect_contains "$t/err" "rank 1 on localhost exited with code 7"
[[ -z $(left_running) ]] || fail "ranks left running: $(left_running)"
echo "ok: a local elastic job restarts and ends"

# 2. Rank 1 fails every time: the job ends with its code when restarts run out.
touch "$t/fail_always"
expect_exit 7 timeout -k 2 30 "$DDL" run -H localhost:2 --np 1:2 --max-restarts 1 "$rank"
expect_contains "$t/err" "ddl: error: rank 1 on localhost exited with code 7"
expect_contains "$t/err" "(DDL_ATTEMPT=1, no restart left)"
[[ -z $(left_running) ]] || fail "ranks left running: $(left_running)"
rm "$t/fail_always"
echo "ok: a local elastic job that keeps failing ends with the rank's code"

# 3. SIGTERM to ddl during the re-planned attempt ends it (143), ranks and all.
touch "$t/linger"
timeout -k 2 30 "$DDL" run -H localhost:2 --np 1:2 --max-restarts 1 "$rank" \
  >"$t/out" 2>"$t/err" &
ddl_pid=$!
for ((i = 0; i < 200; i++)); do [[ -e $t/linger.0 && -e $t/linger.1 ]] && break; sleep 0.1; done
[[ -e $t/linger.0 && -e $t/linger.1 ]] || { cat "$t/err"; fail "attempt 1 never started both ranks"; }
kill -TERM "$ddl_pid"
rc=0; wait "$ddl_pid" || rc=$?
[[ $rc == 143 ]] || { cat "$t/err"; fail "SIGTERM during attempt 1: exit $rc, want 143"; }
expect_contains "$t/err" "ddl: interrupted by SIGTERM"
[[ -z $(left_running) ]] || fail "ranks left running after SIGTERM: $(left_running)"
rm "$t/linger"
echo "ok: SIGTERM ends a re-planned local attempt"

# 4. Two names of this machine and launch.host_failures = 1: the failing
#    rank's host is left out and the job restarts on the other one.
cat >"$t/job.toml" <<TOML
[job]
command = ["$rank"]
[launch]
min_np = 1
host_failures = 1
TOML
expect_exit 0 timeout -k 2 30 "$DDL" run "$t/job.toml" -H localhost:1,127.0.0.1:1 --max-restarts 1
expect_contains "$t/err" "ddl: leaving out host 127.0.0.1: its ranks failed first 1 time"
expect_contains "$t/out" "[0] rank 0 of 1 attempt 1"
[[ -z $(left_running) ]] || fail "ranks left running: $(left_running)"
echo "ok: a local host that failed is left out and the job restarts on the other"
