#!/usr/bin/env bash
# Live jobs (issue 19): ddl ps, logs [-f] [--rank], signal, stop through the
# per-user runtime folder; stale sockets are removed; an unsafe folder is
# refused; another user can neither connect nor be answered.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
export XDG_RUNTIME_DIR=$t/xdg  # this test's own folder, whoever else runs ddl here
mkdir -m 0700 "$XDG_RUNTIME_DIR"
rundir=$XDG_RUNTIME_DIR/ddl

cat >"$t/tick.sh" <<EOF2
trap 'echo "got USR1 \$DDL_RANK"' USR1
i=0
while :; do echo "tick \$DDL_RANK \$i"; i=\$((i + 1)); "$nap" 0.2 & wait \$!; done
EOF2
printf '[job]\nname = "livetest"\ncommand = ["sh", "%s"]\n' "$t/tick.sh" >"$t/job.toml"
"$DDL" run --np 2 "$t/job.toml" >"$t/job.out" 2>"$t/job.err" &
job=$!
wait_for "^$job +livetest +2 +localhost +running" "$DDL" ps
[[ $(stat -c %a "$rundir") == 700 && $(stat -c %a "$rundir/$job.sock") == 600 ]] || fail "runtime modes"
"$DDL" ps --json | python3 -c "
import json, sys
jobs = json.load(sys.stdin)['jobs']
assert [j['name'] for j in jobs] == ['livetest'] and jobs[0]['ranks'] == 2 and jobs[0]['id'] == '$job', jobs
assert 'token' not in json.dumps(jobs).lower()"

# logs: what the job printed, one rank; the token never leaves.
wait_for '^\[1\] tick 1 2$' "$DDL" logs livetest --rank 1
expect_exit 0 "$DDL" logs "$job" --rank 1
expect_not_contains "$t/out" "[0]"
expect_exit 2 "$DDL" logs livetest --rank 7
expect_contains "$t/err" "rank 7 is not in this job of 2 ranks"

# signal: USR1 reaches every rank; an unknown name is refused.
expect_exit 0 "$DDL" signal livetest USR1
expect_contains "$t/err" "SIGUSR1 forwarded to every running rank"
wait_for '^\[1\] got USR1 1$' cat "$t/job.out"
grep -q '^\[0\] got USR1 0$' "$t/job.out" || fail "rank 0 missed USR1"
expect_exit 2 "$DDL" signal livetest NOPE
expect_contains "$t/err" "ddl: error: 'NOPE' is not a signal"

# Two jobs of one name: the name is ambiguous, the id is not.
"$DDL" run --np 1 "$t/job.toml" >/dev/null 2>&1 &
second=$!
wait_for "^$second " "$DDL" ps
expect_exit 2 "$DDL" logs livetest
expect_contains "$t/err" "ddl: error: 2 running jobs are named 'livetest' (ids "
expect_exit 0 "$DDL" stop "$second"
wait "$second" || [[ $? == 130 ]] || fail "the second job did not exit 130"

# A follower sees new lines and ends with the job; stop is Ctrl-C: 130.
"$DDL" logs -f "$job" --rank 0 >"$t/follow.out" 2>"$t/follow.err" &
follower=$!
sleep 0.5
expect_exit 0 "$DDL" stop livetest
expect_contains "$t/err" "ddl: job livetest ($job): SIGINT sent to ddl (as Ctrl-C)"
expect_contains "$t/err" "ddl: job livetest ($job) ended with exit code 130"
got=0; wait "$job" || got=$?
[[ $got == 130 ]] || fail "the stopped job exited $got, not 130"
wait "$follower" || fail "logs -f did not end cleanly with the job"
grep -q '^\[0\] tick 0 ' "$t/follow.out" || fail "the follower saw no line"
expect_contains "$t/follow.err" "ended with exit code 130"
expect_none_left 3
[[ -z $(ls -A "$rundir") ]] || fail "left in the runtime folder: $(ls -A "$rundir")"
expect_exit 2 "$DDL" stop livetest
expect_contains "$t/err" "no running ddl job of yours is named or numbered 'livetest'"

# A socket left by a ddl killed with -9 is removed by ps.
python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind('$rundir/99999999.sock')"
expect_exit 0 "$DDL" ps
[[ ! -e $rundir/99999999.sock ]] || fail "the stale socket is still there"

# An unsafe runtime folder is refused; a job still runs, without a socket.
chmod 0755 "$rundir"
expect_exit 3 "$DDL" ps
expect_contains "$t/err" "ddl: error: $rundir has mode 0755; it must be 0700"
expect_exit 0 "$DDL" run --np 1 -- true
expect_contains "$t/err" "ddl: warning: no ddl ps/logs/stop/signal for this job: $rundir has mode 0755"
chmod 0700 "$rundir"

# Another user: not in our folder, and not answered even when let in.
if [[ $(id -u) == 0 ]] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
  "$DDL" run --np 1 "$t/job.toml" >/dev/null 2>&1 &
  third=$!
  wait_for "^$third " "$DDL" ps
  connect_as_nobody() {
    runuser -u nobody -- /usr/bin/python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('$rundir/$third.sock')
except OSError as e:
    print('connect failed:', e.strerror); sys.exit(0)
try:
    s.sendall(b'info\n')
except OSError:
    pass  # refused before it asked: the answer is still there to read
print(s.recv(4096).decode().strip())"
  }
  [[ $(connect_as_nobody) == "connect failed: Permission denied" ]] || fail "nobody reached the socket"
  expect_exit 3 runuser -u nobody -- env XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$DDL" ps
  expect_contains "$t/err" "ddl: error: $rundir: Permission denied"
  chmod 0711 "$t" "$XDG_RUNTIME_DIR"
  expect_exit 3 runuser -u nobody -- env XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$DDL" ps
  expect_contains "$t/err" "is owned by uid 0, not by you (uid $(id -u nobody))"
  [[ $(connect_as_nobody) == "connect failed: Permission denied" ]] || fail "nobody reached the socket"
  # Let in by hand (folder and socket opened up): SO_PEERCRED still refuses.
  chmod 0711 "$rundir"; chmod 0777 "$rundir/$third.sock"
  [[ $(connect_as_nobody) == "X refused: this job belongs to another user" ]] ||
    fail "nobody was answered: $(connect_as_nobody)"
  chmod 0700 "$t" "$XDG_RUNTIME_DIR" "$rundir"
  expect_exit 0 "$DDL" stop "$third"
  wait "$third" || true
else
  echo "SKIP (part of this test): another user's view needs root, user nobody and runuser" >&2
  [[ ${CI:-} == true ]] && fail "under CI this test runs as root with user nobody and runuser"
fi
expect_none_left 3
