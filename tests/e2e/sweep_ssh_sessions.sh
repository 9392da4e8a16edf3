#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sweep over ssh keeps one connection per host for all its trials (issue
# 32): each trial's ranks start as channels of the sweep's session broker,
# through ddl's relay on the host: one login shell per host for the whole
# sweep, no handshake. Counted on the hosts
# (NETNS_COUNT_SHELLS). A rank's failure fails its trial with the result.json
# the trial writes without the broker (the same request run with the broker
# left out); a broker that ends fails the trial at once; trials of two ranks
# per host run their own relay under the broker's. sweep_ssh_reconnect:
# a connection the broker lost.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v python3 >/dev/null || skip "python3 is not installed"
NETNS_COUNT_SHELLS=1 netns_up 2
a=("${NETNS_ADDRS[@]}")
job=$t/job.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
[job]
command = 'echo "trial {i} on \$(hostname)"; [ {i} != 3 ] || { echo "trial 3 fails" >&2; exit 7; }'
[sweep]
method = "list"
retries = 0
[sweep.parameters]
i = [0, 1, 2, 3, 4, 5]
TOML

# 1. Six trials over two hosts: one connection and one shell per host.
expect_exit 1 ddl_ssh sweep "$job" -H "${a[0]}:1,${a[1]}:1" --backend ssh --dir "$t/s"
shells=$(($(netns_shells 0) + $(netns_shells 1)))
[[ $(netns_handshakes 0) == 1 && $(netns_handshakes 1) == 1 ]] ||
  fail "connections per host: $(netns_handshakes 0) and $(netns_handshakes 1), want 1 and 1 for the whole sweep"
[[ $shells == 2 ]] || fail "$shells login shells for 6 trials on 2 hosts, want 2 (ddl's relay runs the trials)"
netns_relays_gone
for i in 0 1 2 4 5; do
  expect_contains "$t/s/trial-000$i/output.log" "[0] trial $i on h"
done
python3 - "$t/s" <<'PY'
import json, sys
sweep = sys.argv[1]
for i in range(6):
    result = json.load(open(f"{sweep}/trial-000{i}/result.json"))
    want = ("failed", 7) if i == 3 else ("ok", 0)
    assert (result["reason"], result["exit_code"]) == want, (i, result)
    assert json.load(open(f"{sweep}/trial-000{i}/request.json"))["ssh_broker"], i
PY
[[ ! -e $t/s/.ssh-broker ]] || fail "the broker's folder is left in the sweep directory"
echo "ok: one connection per host for 6 trials"

# 2. The failed trial's result.json is the one it writes on its own connection.
python3 - "$t/s/trial-0003" "$t/alone" <<'PY'
import json, os, sys
trial, alone = sys.argv[1], sys.argv[2]
os.makedirs(alone)
req = json.load(open(f"{trial}/request.json"))
del req["ssh_broker"]
req["trial_dir"], req["log_dir"], req["result"] = alone, f"{alone}/logs", f"{alone}/result.json"
json.dump(req, open(f"{alone}/request.json", "w"))
PY
: >"$NETNS_DIR/shells"
expect_exit 7 ddl_ssh run --trial "$t/alone/request.json"
python3 - "$t/s/trial-0003/result.json" "$t/alone/result.json" <<'PY'
import json, sys
brokered, alone = (json.load(open(p)) for p in sys.argv[1:])
for key in ("exit_code", "reason", "error", "gang_attempts", "hosts", "metric"):
    assert brokered.get(key) == alone.get(key), (key, brokered.get(key), alone.get(key))
logs = [open(p).read() for p in (brokered["rank0_logs"] + alone["rank0_logs"])]
assert len(logs) == 2 and all("trial 3 fails" in log for log in logs), logs
PY
(($(netns_handshakes 0) + $(netns_handshakes 1) == 1)) || fail "the trial alone did not connect itself"
echo "ok: a rank's failure fails its trial as without the broker"

# 3. A broker that ends mid-trial (a stand-in that answers the hello and the
# first open, then closes): the trial fails at once, naming it; no wait.
python3 - "$t/alone/request.json" "$t/gone.sock" <<'PY'
import json, sys
req = json.load(open(sys.argv[1]))
req["ssh_broker"] = sys.argv[2]
json.dump(req, open(sys.argv[1], "w"))
PY
python3 - "$t/gone.sock" <<'PY' &
import socket, struct, sys
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
server.listen(1)
conn, _ = server.accept()
def recv(n):
    data = b""
    while len(data) < n:
        more = conn.recv(n - len(data))
        if not more:
            sys.exit("the trial closed the socket")
        data += more
    return data
def frame():
    body = recv(struct.unpack(">I", recv(4))[0])
    return struct.unpack(">I", body[1:5])[0]
frame()
ready = b'{"version":1}'  # frame protocol version 1 (doc/protocols.md)
conn.sendall(struct.pack(">IBI", 5 + len(ready), 16, 0) + ready)
channel = frame()
conn.sendall(struct.pack(">IBI", 5, 18, channel))  # opened
conn.close()
server.close()
PY
wait_files 1 "$t/gone.sock"
start=$SECONDS
expect_exit 3 ddl_ssh run --trial "$t/alone/request.json"
wait
((SECONDS - start < 20)) || fail "the trial took $((SECONDS - start))s to see its broker end"
# The probe's channel fails as it is written to or read ("is gone" / "ended");
# whether the trial then tries the broker's socket again ("cannot reach")
# depends on which of its steps sees the end first, so that is not asked.
grep -qE "the sweep's session broker \($t/gone.sock\) (is gone|ended)" "$t/err" || fail "$(cat "$t/err")"
expect_contains "$t/err" "ddl: error: cannot start on 1 of 1 host:"
echo "ok: a broker that ends fails the trial"

# 4. Trials of two ranks on one host: each trial's relay runs under the
# broker's, still one login shell per host for the whole sweep.
: >"$NETNS_DIR/shells"
sed -i 's/^retries = 0$/retries = 0\nnp = 2/; s/^i = .*/i = [0, 1, 2, 4]/' "$job"
expect_exit 0 ddl_ssh sweep "$job" -H "${a[0]}:2,${a[1]}:2" --backend ssh --dir "$t/two"
for i in 0 1 2 3; do
  expect_contains "$t/two/trial-000$i/output.log" "[0] trial"
  expect_contains "$t/two/trial-000$i/output.log" "[1] trial"
done
shells=$(($(netns_shells 0) + $(netns_shells 1)))
[[ $shells == 2 ]] || fail "$shells login shells for 4 trials of 2 ranks on 2 hosts, want 2"
netns_relays_gone
echo "ok: a trial's own relay under the broker's"

echo PASS
