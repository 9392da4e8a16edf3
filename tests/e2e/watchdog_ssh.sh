#!/usr/bin/env bash
# The hang watchdog and preemption (issue 17) over ssh on the namespace
# hosts: a stalled Python rank on each host is dumped through the shim
# (faulthandler on SIGUSR1; py-spy where it is not installed says so) and
# ended with exit 5; SIGUSR2 reaches every remote rank; SIGTERM to ddl with
# checkpoint_signal: the remote ranks save and exit 0, ddl exits 143 and no
# rank or shim is left on any host.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v python3 >/dev/null || skip "python3 not installed"
netns_up 2
mark="wd$$x$RANDOM"
spec="${NETNS_ADDRS[0]}:1,${NETNS_ADDRS[1]}:1"

cat >"$t/hang.py" <<'PY'
import faulthandler, signal, time
faulthandler.register(signal.SIGUSR1, all_threads=True)
print("step 1", flush=True)
time.sleep(60)
PY
{ cat "$NETNS_DIR/ssh.toml"; cat <<TOML
[job]
command = ["python3", "$t/hang.py", "$mark"]
grace = "1s"
[watchdog]
stall = "2s"
dump = "SIGUSR1"
dump_timeout = "10s"
TOML
} >"$t/stall.toml"
start=$SECONDS
rc=0; ddl_ssh run "$t/stall.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" || rc=$?
[[ $rc == 5 ]] || { cat "$t/out" "$t/err"; fail "stall over ssh: exit $rc, want 5"; }
(( SECONDS - start < 15 )) || fail "stall over ssh took $((SECONDS - start))s"
expect_contains "$t/err" "ddl: error: stalled ranks: 0-1"
expect_contains "$t/err" "ddl: rank 1 on ${NETNS_ADDRS[1]}: last line: step 1"
expect_contains "$t/err" "ddl: stack dump of rank 1"
expect_contains "$t/err" "hang.py\", line 4 in <module>"
sleep 1
[[ $(netns_count_all "$mark") == 0 ]] || fail "a stalled rank is left on a host"

# The default dump (py-spy) through the shim: where py-spy is missing the
# rank's host says so, and that is the evidence.
if ! command -v py-spy >/dev/null; then
  sed -e 's/^dump = .*/dump = "py-spy"/' -e 's/^dump_timeout = .*/dump_timeout = "5s"/' "$t/stall.toml" >"$t/pyspy.toml"
  rc=0; ddl_ssh run "$t/pyspy.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" || rc=$?
  [[ $rc == 5 ]] || { cat "$t/err"; fail "py-spy dump over ssh: exit $rc, want 5"; }
  expect_contains "$t/err" "(py-spy dump)"
  expect_contains "$t/err" "ddl: py-spy is not installed on"
else
  echo "SKIP (part of this test): py-spy is installed here, so its absence on a host is not checked" >&2
fi

# SIGUSR2 to ddl reaches both remote ranks; SIGTERM with checkpoint_signal:
# both save on SIGUSR1 and exit 0; ddl exits 143.
cat >"$t/rank.py" <<'PY'
import os, signal, sys, time
up = sys.argv[1]
def note(text):
    with open(f"{up}/{os.environ['DDL_RANK']}.{text}", "w"):
        pass
def save(signo, frame):
    time.sleep(0.3)
    note("saved")
    sys.exit(0)
signal.signal(signal.SIGUSR1, save)
signal.signal(signal.SIGUSR2, lambda s, f: note("usr2"))
note("up")
while True:
    time.sleep(0.05)
PY
mkdir "$t/up"
{ cat "$NETNS_DIR/ssh.toml"; cat <<TOML
[job]
command = ["python3", "$t/rank.py", "$t/up", "$mark"]
checkpoint_signal = "SIGUSR1"
checkpoint_grace = "10s"
TOML
} >"$t/ckpt.toml"
ddl_ssh run "$t/ckpt.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" &
runner=$!
wait_files 2 "$t/up/*.up"
ddl=$(pgrep -f -- "^$DDL run $t/ckpt.toml" | head -1)
kill -USR2 "$ddl"
wait_files 2 "$t/up/*.usr2"
kill -TERM "$ddl"
rc=0; wait "$runner" || rc=$?
[[ $rc == 143 ]] || { cat "$t/err"; fail "checkpoint over ssh: exit $rc, want 143"; }
wait_files 2 "$t/up/*.saved"
expect_contains "$t/err" "ddl: every rank exited within job.checkpoint_grace (10s) after SIGUSR1"
sleep 1
[[ $(netns_count_all "$mark") == 0 ]] || fail "a rank is left on a host"
[[ $(netns_count_all __ddl_) == 0 ]] || fail "a shim is left on a host"
