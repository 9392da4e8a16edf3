#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sweep's session broker (issue 32) under a trial that stops reading and
# connections that say nothing (issue 40, item 4):
# 1. A trial stopped (SIGSTOP) while its rank prints 200 MB: the broker keeps
#    at most about a megabyte for it and holds the rank's output at ddl's
#    relay (or, on a host without this ddl, leaves its ssh window shut); the
#    rank waits on its writes and the sweep's memory stays flat. Before, the
#    broker kept it all (+160 MB for 140 MB printed).
# 2. While that trial is held, 40 connections that send no hello do not hold
#    up a trial's: it is answered at once. Before, each was awaited 5 s in
#    turn on the accepting thread.
# 3. An open with a channel id that is open already is refused, naming it.
#    Before: "the connection is lost".
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v python3 >/dev/null || skip "python3 is not installed"
netns_up 1
addr=${NETNS_ADDRS[0]}
flood="head -c 200000000"
job=$t/job.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
[job]
command = 'yes 0123456789abcdef0123456789abcdef0123456789abcdef | $flood; sleep 60'
[sweep]
method = "list"
retries = 0
[sweep.parameters]
i = [0]
TOML
# The same where the host has another ddl: no relay, a channel per rank.
printf '#!/bin/sh\necho "ddl 0.0.0-other"\n' >"$t/other-ddl"
chmod +x "$t/other-ddl"
sed "s|^\[ssh\]|[ssh]\nremote_ddl = \"$t/other-ddl\"|" "$job" >"$t/other.toml"
grep -q "remote_ddl" "$t/other.toml" || fail "no [ssh] section in $NETNS_DIR/ssh.toml"
ddl_exe=$(readlink -f "$DDL")
# pid_of PATTERN: the ddl process whose command line has PATTERN.
pid_of() {
  local p
  for p in $(pgrep -f -- "$1"); do
    [[ $(readlink "/proc/$p/exe" 2>/dev/null) == "$ddl_exe" ]] && { echo "$p"; return 0; }
  done
  return 1
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# held_trial JOB DIR WHAT: the sweep of JOB in DIR runs, its trial is stopped
# once it has read a megabyte; the sweep must not grow while the rank writes.
# Leaves the sweep running: $sweep_pid, its trial $trial.
held_trial() {
  local log=$2/trial-0000/output.log sweep writer before after last now i
  DDL_TIMEOUT=120 ddl_ssh sweep "$1" -H "$addr:1" --backend ssh --dir "$2" >"$t/out" 2>"$t/err" &
  sweep_pid=$!
  for i in $(seq 600); do (($(stat -c %s "$log" 2>/dev/null || echo 0) > 1000000)) && break; sleep 0.1; done
  (($(stat -c %s "$log" 2>/dev/null || echo 0) > 1000000)) || fail "$3: the trial printed little: $(cat "$t/err")"
  sweep=$(pid_of " sweep $1") || fail "$3: no sweep process"
  trial=$(pid_of "run --trial $2/trial-0000/request.json") || fail "$3: no trial process"
  writer=$(pgrep -f -- "^$flood") || fail "$3: the rank's writer is not running"
  kill -STOP "$trial"
  before=$(rss_kb "$sweep")
  # The rank writes until something holds it (or until it is done).
  last=-1
  for i in $(seq 240); do
    now=$(awk '/^wchar:/ { print $2 }' "/proc/$writer/io" 2>/dev/null) || break  # done: all of it taken
    [[ $now == "$last" ]] && break
    last=$now; sleep 0.5
  done
  after=$(rss_kb "$sweep")
  ((after - before < 48 * 1024)) ||
    fail "$3: the sweep grew from $before kB to $after kB while its trial read nothing (the rank wrote $last bytes)"
  kill -0 "$writer" 2>/dev/null || fail "$3: the rank wrote all 200 MB while its trial read nothing"
  echo "ok: $3: a trial that stops reading holds its rank after $last bytes (sweep at $before then $after kB)"
}

# end_held WHAT: the held trial ends (KILL): its rank ends with its channel,
# the sweep too.
end_held() {
  local got=0 i
  kill -KILL "$trial"
  wait "$sweep_pid" || got=$?
  [[ $got == 1 ]] || fail "$1: sweep exit $got, want 1 (its one trial failed): $(cat "$t/err")"
  for i in $(seq 100); do (($(netns_count_all "$flood") + $(netns_count_all "sleep 60") == 0)) && break; sleep 0.1; done
  (($(netns_count_all "$flood") + $(netns_count_all "sleep 60") == 0)) || fail "$1: the held trial's rank is left running"
  netns_relays_gone
}

# 1. Through ddl's relay.
held_trial "$job" "$t/s" "through ddl's relay"

# 2 and 3, to the broker while that trial is held.
python3 - "$t/s/.ssh-broker/socket" "$addr" <<'PY' || fail "the broker's answers (above)"
import json, socket, struct, sys
path, addr = sys.argv[1], sys.argv[2]
idle = []
for _ in range(40):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)  # blocking: waits while the listen backlog is full
    idle.append(s)
c = socket.socket(socket.AF_UNIX)
c.connect(path)
c.settimeout(20)  # a hang guard: the answer comes at once
def send(kind, channel, data=b""):
    c.sendall(struct.pack(">IBI", 5 + len(data), kind, channel) + data)
def exact(n):
    data = b""
    while len(data) < n:
        got = c.recv(n - len(data))
        if not got:
            sys.exit("the broker closed the connection")
        data += got
    return data
def frame():
    body = exact(struct.unpack(">I", exact(4))[0])
    return body[0], struct.unpack(">I", body[1:5])[0], body[5:].decode()
send(1, 0, json.dumps({"version": 1, "name": addr, "address": addr, "user": ""}).encode())
try:
    answer = frame()
except socket.timeout:
    sys.exit("no answer to a hello in 20 s behind 40 silent connections")
assert answer[0] == 16, ("not ready", answer)
send(2, 7, b"cat")
assert frame() == (18, 7, ""), "channel 7 not opened"
send(2, 7, b"cat")
answer = frame()
assert answer == (19, 7, "cannot open channel 7: it is open already"), answer
send(5, 7)
PY
echo "ok: 40 silent connections hold up no hello; a channel id open already is named"

end_held "through ddl's relay"

# 1 again, on a host without this ddl (the broker's own ssh channel).
held_trial "$t/other.toml" "$t/o" "without ddl's relay"
end_held "without ddl's relay"

# 4. A held trial that goes on (SIGCONT) gets all of its rank's output, then
# its exit status: nothing is lost or reordered by the hold. Both ways.
lines=300000
for way in job other; do
  [[ $way == job ]] && file=$job || file=$t/other.toml
  sed "s/^command = .*/command = 'yes 0123456789abcdef0123456789abcdef0123456789abcdef | head -n $lines; echo last line; exit 3'/" \
    "$file" >"$t/resume-$way.toml"
  log=$t/r-$way/trial-0000/output.log
  DDL_TIMEOUT=120 ddl_ssh sweep "$t/resume-$way.toml" -H "$addr:1" --backend ssh --dir "$t/r-$way" >"$t/out" 2>"$t/err" &
  sweep_pid=$!
  for i in $(seq 600); do (($(stat -c %s "$log" 2>/dev/null || echo 0) > 1000000)) && break; sleep 0.1; done
  trial=$(pid_of "run --trial $t/r-$way/trial-0000/request.json") || fail "$way: no trial process"
  kill -STOP "$trial"
  sleep 1
  kill -CONT "$trial"
  got=0; wait "$sweep_pid" || got=$?
  [[ $got == 1 ]] || fail "$way: a held trial that went on: sweep exit $got, want 1 (its rank exits 3): $(cat "$t/err")"
  n=$(grep -c "^\[0\] 0123456789abcdef0123456789abcdef0123456789abcdef$" "$log" || true)
  [[ $n == "$lines" ]] || fail "$way: $n of $lines lines reached the held trial's log"
  [[ $(grep "^\[0\] " "$log" | tail -n 1) == "[0] last line" ]] || fail "$way: the last line is not last: $(tail -n 3 "$log")"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["exit_code"] == 3, r' \
    "$t/r-$way/trial-0000/result.json" || fail "$way: the held trial's result"
done
echo "ok: a held trial that goes on gets all of its output, then the status"
echo PASS
