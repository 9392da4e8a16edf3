#!/usr/bin/env bash
# --timeout ends the job with 124 and says so, and leaves nothing; a job that
# beats its timeout is untouched; --max-restarts restarts the whole gang with
# DDL_ATTEMPT / TORCHELASTIC_RESTART_COUNT counting up, and gives up after
# the last restart with the failing rank's code.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

start=$SECONDS
expect_exit 124 timeout -k 5 30 "$DDL" run --np 2 --timeout 1s -- sh -c "$nap 60; true"
expect_contains "$t/err" "ddl: error: timed out after 1s"
(( SECONDS - start < 8 )) || fail "the timeout did not end the job in time"
expect_none_left 2

expect_exit 0 timeout -k 5 30 "$DDL" run --np 2 --timeout 20s -- sh -c 'sleep 0.2; echo done'
expect_contains "$t/out" "[1] done"

# Rank 1 fails on attempts 0 and 1, succeeds on attempt 2.
expect_exit 0 timeout -k 5 30 "$DDL" run --np 2 --max-restarts 2 -- sh -c \
  'echo "attempt $DDL_ATTEMPT restart $TORCHELASTIC_RESTART_COUNT"; [ $DDL_RANK = 0 ] || [ $DDL_ATTEMPT -ge 2 ] || exit 9; sleep 0.1'
for a in 0 1 2; do expect_contains "$t/out" "[1] attempt $a restart $a"; done
# ddl names attempts as the ranks see them: DDL_ATTEMPT, 0 first (issue 19).
expect_contains "$t/err" "restarting (DDL_ATTEMPT=1, restart 1 of 2)"
expect_contains "$t/err" "restarting (DDL_ATTEMPT=2, restart 2 of 2)"

expect_exit 9 timeout -k 5 30 "$DDL" run --np 2 --max-restarts 1 -- sh -c \
  'echo "attempt $DDL_ATTEMPT"; [ $DDL_RANK = 0 ] && exec sleep 30; exit 9'
expect_contains "$t/out" "[1] attempt 1"
expect_not_contains "$t/out" "[1] attempt 2"
expect_contains "$t/err" "ddl: error: rank 1 on localhost exited with code 9"
expect_contains "$t/err" "(DDL_ATTEMPT=1, no restart left)"

# The same attempt number in the message, the rank's DDL_ATTEMPT, the
# {attempt} prefix field and the log file's name.
expect_exit 9 timeout -k 5 30 "$DDL" run --np 1 --max-restarts 1 --log-dir "$t/logs" --prefix '<{attempt}> ' -- \
  sh -c 'echo "attempt $DDL_ATTEMPT"; exit 9'
expect_contains "$t/out" "<0> attempt 0"
expect_contains "$t/out" "<1> attempt 1"
expect_contains "$t/err" "restarting (DDL_ATTEMPT=1, restart 1 of 1)"
expect_contains "$t/logs/rank-0.attempt-1.log" "attempt 1"
