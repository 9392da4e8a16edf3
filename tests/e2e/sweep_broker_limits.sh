#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sweep's session broker (issue 32) under a trial that stops reading and
# connections that say nothing (issue 40, item 4):
# 1. A trial stopped (SIGSTOP) while its rank prints 200 MB: the broker keeps
#    at most about a megabyte for it and holds the rank's output at ddl's
#    relay (the rank waits on its writes, as on a full ssh window); the
#    sweep's memory stays flat. Before, the broker kept it all (+200 MB).
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
DDL_TIMEOUT=120 ddl_ssh sweep "$job" -H "$addr:1" --backend ssh --dir "$t/s" >"$t/out" 2>"$t/err" &
job_pid=$!
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

# 1. The trial reads some output, then stops reading.
log=$t/s/trial-0000/output.log
for i in $(seq 600); do (($(stat -c %s "$log" 2>/dev/null || echo 0) > 1000000)) && break; sleep 0.1; done
(($(stat -c %s "$log" 2>/dev/null || echo 0) > 1000000)) || fail "the trial printed little: $(cat "$t/err")"
sweep=$(pid_of " sweep $job") || fail "no sweep process"
trial=$(pid_of "run --trial $t/s/trial-0000/request.json") || fail "no trial process"
writer=$(pgrep -f -- "^$flood") || fail "the rank's writer is not running"
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
  fail "the sweep grew from $before kB to $after kB while its trial read nothing (the rank wrote ${last} bytes)"
kill -0 "$writer" 2>/dev/null || fail "the rank wrote all 200 MB while its trial read nothing"
echo "ok: a trial that stops reading holds its rank after $last bytes (sweep at $before then $after kB)"

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

# The held trial ends (KILL): its rank ends with its channel, the sweep too.
kill -KILL "$trial"
got=0; wait "$job_pid" || got=$?
[[ $got == 1 ]] || fail "sweep exit $got, want 1 (its one trial failed): $(cat "$t/err")"
for i in $(seq 100); do (($(netns_count_all "$flood") + $(netns_count_all "sleep 60") == 0)) && break; sleep 0.1; done
(($(netns_count_all "$flood") + $(netns_count_all "sleep 60") == 0)) || fail "the held trial's rank is left running"
netns_relays_gone
echo PASS
