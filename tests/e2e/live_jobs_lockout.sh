#!/usr/bin/env bash
# Live control cannot be locked out, and never calls a running job gone.
# 32 `ddl logs -f` followers leave room for ps, logs, signal and stop (a
# 33rd follower is told why, exit 3); a job whose ddl is stopped (SIGSTOP, as
# Ctrl-Z leaves it) is listed as stopped at once (state T in /proc; it was
# "not answering" after the whole 3 s budget, issue 40 item 12) by every one
# of 20 `ddl ps` run at once, the others still listed; logs, stop and signal
# of it exit 3 "is stopped", never "no such job"; warnings read
# "ddl: warning: ...". (issue 27, items 6 and 7)
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
export XDG_RUNTIME_DIR=$t/xdg  # this test's own folder, whoever else runs ddl here
mkdir -m 0700 "$XDG_RUNTIME_DIR"

# timed MAX CODE CMD...: exit CODE within MAX seconds.
timed() {
  local max=$1 start end; shift
  start=$(date +%s.%N)
  expect_exit "$1" timeout -k 1 $((max + 10)) "${@:2}"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" -v m="$max" -v c="${*:2:3}" \
    'BEGIN { printf "%s: %.2fs\n", c, b - a; exit !(b - a < m) }' >&2 || fail "took over ${max}s: ${*:2}"
}

printf '[job]\nname = "%s"\ncommand = "while :; do echo tick; %s 0.2; done"\n' followed "$nap" >"$t/followed.toml"
"$DDL" run --np 1 "$t/followed.toml" >/dev/null 2>&1 &
followed=$!
wait_for "^$followed +followed +1 +localhost +running" "$DDL" ps

# 32 followers: all served; ps, logs, signal still answered.
followers=()
for i in $(seq 32); do
  "$DDL" logs -f followed >"$t/follow.$i" 2>&1 &
  followers+=($!)
done
for i in $(seq 32); do wait_for "tick" cat "$t/follow.$i"; done
timed 4 0 "$DDL" ps
expect_contains "$t/out" "followed"
timed 4 0 "$DDL" logs followed
expect_contains "$t/out" "[0] tick"
timed 4 0 "$DDL" signal followed CONT
timed 4 3 "$DDL" logs -f followed
expect_contains "$t/err" "ddl: error: this job has 32 followers (ddl logs -f) already"

# A stopped job: listed as stopped by 20 parallel ps; the others still listed.
printf '[job]\nname = "%s"\ncommand = ["%s", "60"]\n' frozen "$nap" >"$t/frozen.toml"
"$DDL" run --np 1 "$t/frozen.toml" >/dev/null 2>&1 &
frozen=$!
wait_for "^$frozen +frozen" "$DDL" ps
kill -STOP $frozen
start=$(date +%s.%N)
pids=()
for i in $(seq 20); do
  timeout -k 1 20 "$DDL" ps >"$t/ps.$i" 2>"$t/ps.$i.err" &
  pids+=($!)
done
for i in $(seq 20); do
  got=0; wait "${pids[$((i - 1))]}" || got=$?
  [[ $got == 0 ]] || { cat "$t/ps.$i" "$t/ps.$i.err"; fail "ddl ps number $i exited $got"; }
  grep -qE "^$frozen +\? +\? +\? +stopped +\?$" "$t/ps.$i" || { cat "$t/ps.$i"; fail "ps $i: the stopped job is not listed as stopped"; }
  grep -qE "^$followed +followed +1 +localhost +running" "$t/ps.$i" || { cat "$t/ps.$i"; fail "ps $i lost the running job"; }
  grep -qF "ddl: warning: job $frozen is stopped (its ddl, pid $frozen, by Ctrl-Z or SIGSTOP); \`kill -CONT $frozen\` resumes it" "$t/ps.$i.err" ||
    { cat "$t/ps.$i.err"; fail "ps $i: no warning in ddl's words"; }
done
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "20 parallel ddl ps with a stopped job: %.2fs\n", b - a; exit !(b - a < 8) }' >&2 ||
  fail "20 parallel ps took too long"
timed 5 0 "$DDL" ps --json
python3 -c "
import json, sys
jobs = {j['id']: j for j in json.load(open('$t/out'))['jobs']}
assert jobs['$frozen']['state'] == 'stopped' and jobs['$followed']['name'] == 'followed', jobs"
for cmd in "logs $frozen" "stop $frozen" "signal $frozen USR1"; do
  timed 8 3 "$DDL" $cmd
  expect_contains "$t/err" "ddl: error: job $frozen is stopped (its ddl, pid $frozen, by Ctrl-Z or SIGSTOP); \`kill -CONT $frozen\` resumes it"
done
for cmd in "stop frozen" "logs frozen"; do
  timed 8 3 "$DDL" $cmd
  expect_contains "$t/err" "ddl: error: no job that answered is named 'frozen'; job $frozen is stopped (Ctrl-Z or SIGSTOP; kill -CONT resumes), and may be it"
done
# The other job is still served, stopped as it should be.
timed 8 0 "$DDL" stop followed
got=0; wait $followed || got=$?
[[ $got == 130 ]] || fail "the followed job exited $got, not 130"
for pid in "${followers[@]}"; do wait "$pid" || fail "a follower did not end with its job"; done
kill -CONT $frozen
timed 8 0 "$DDL" stop frozen
wait $frozen || true
expect_none_left 3
echo ok
