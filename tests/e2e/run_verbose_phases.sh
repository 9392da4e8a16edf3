#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -v says what each phase of a launch took (read job, hosts, plan, connect,
# preflight, start, run, stop, shut down), one line each as it ends, with
# the attempt after a restart; without -v, none of it.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

duration='[0-9]+\.[0-9](ms|s)'
phases=("read job" "hosts" "plan" "connect" "preflight" "start" "run" "stop" "shut down")

# Rank 1 fails: the gang is stopped (the stop phase), restarted once.
expect_exit 3 timeout -k 5 30 "$DDL" run -v --np 2 --max-restarts 1 -- sh -c '[ "$DDL_RANK" = 1 ] && exit 3; sleep 0.3'
for phase in "${phases[@]}"; do
  grep -qE "^ddl: info: phase $phase: $duration$" "$t/err" || { cat "$t/err"; fail "-v: no line for phase '$phase'"; }
done
for phase in start run stop; do
  grep -qE "^ddl: info: phase $phase \(attempt 1\): $duration$" "$t/err" ||
    { cat "$t/err"; fail "-v: no line for phase '$phase (attempt 1)'"; }
done
# In their order: the plan before the ranks, the ranks before the end.
order=$(grep -oE "^ddl: info: phase [a-z ]+[a-z]" "$t/err" | sed 's/^ddl: info: phase //' | tr '\n' ',')
[[ $order == "read job,hosts,plan,connect,preflight,start,run,stop,start,run,stop,shut down," ]] ||
  fail "-v: phases out of order: $order"

expect_exit 3 timeout -k 5 30 "$DDL" run --np 2 --max-restarts 1 -- sh -c '[ "$DDL_RANK" = 1 ] && exit 3; sleep 0.3'
expect_not_contains "$t/err" "phase"
echo PASS
