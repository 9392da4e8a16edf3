#!/usr/bin/env bash
# The watchdog's evidence over ssh on the namespace hosts (issue 30) and its
# bounded dumpers there (issue 27, item 3). dump = "auto" through the shim:
# a C program is dumped by gdb on its host and rank 1, stuck elsewhere, is
# the suspect; a Python rank (no py-spy there) by its faulthandler with its
# Python frames; dump = "SIGUSR1" without a handler is reported as the dump
# signal's kill. A py-spy that never returns (a test double, first on the
# hosts' PATH through sshd's SetEnv) is killed at dump_timeout, and after
# `kill -9` of ddl no dumper and no rank is left on any host.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v python3 >/dev/null || skip "python3 not installed"
have gdb gdb || exit 0
have cc gcc || exit 0
mark="wdd$$x$RANDOM"
# The hosts' PATH starts with a folder that gets the py-spy double last.
mkdir "$t/fake-$mark"
NETNS_SSHD_EXTRA="SetEnv PATH=$t/fake-$mark:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
ln -s "$(command -v sleep)" "$t/nap-$mark"
netns_up 2
spec="${NETNS_ADDRS[0]}:2,${NETNS_ADDRS[1]}:1"

cc -g -O0 -o "$t/stuck-$mark" "$DDL_SOURCE_DIR/tests/fixtures/watchdog/stuck.c"
{ cat "$NETNS_DIR/ssh.toml"; cat <<TOML
[job]
command = ["$t/stuck-$mark"]
grace = "1s"
[watchdog]
stall = "2s"
dump_timeout = "20s"
TOML
} >"$t/native.toml"
start=$SECONDS
rc=0; ddl_ssh run "$t/native.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" || rc=$?
[[ $rc == 5 ]] || { cat "$t/out" "$t/err"; fail "native stall over ssh: exit $rc, want 5"; }
echo "native dump by gdb over ssh: $((SECONDS - start))s from start to exit (stall 2s)"
expect_contains "$t/err" "by gdb:"
grep -qE "^ddl: suspect: rank 1 on ${NETNS_ADDRS[0]}: in .*lost_in_here" "$t/err" || { cat "$t/err"; fail "rank 1 not the suspect"; }
grep -qE "^ddl: ranks 0,2: in .*wait_for_peers" "$t/err" || { cat "$t/err"; fail "ranks 0,2 not grouped"; }
sleep 1
[[ $(netns_count_all "$mark") == 0 ]] || fail "a rank is left on a host"

# A Python rank: faulthandler (SIGABRT, PYTHONFAULTHANDLER=1 from ddl).
cat >"$t/hang.py" <<'PY'
import os, time
def wait_for_peers():
    time.sleep(600)
def lost_in_here():
    time.sleep(600)
print("up", flush=True)
lost_in_here() if os.environ["DDL_RANK"] == "1" else wait_for_peers()
PY
{ cat "$NETNS_DIR/ssh.toml"; cat <<TOML
[job]
command = ["/usr/bin/python3", "$t/hang.py", "$mark"]
grace = "1s"
[watchdog]
stall = "2s"
dump = "auto"
dump_timeout = "20s"
TOML
} >"$t/py.toml"
rc=0; ddl_ssh run "$t/py.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" || rc=$?
[[ $rc == 5 ]] || { cat "$t/out" "$t/err"; fail "Python stall over ssh: exit $rc, want 5"; }
if ! netns_exec sh -c "command -v py-spy" >/dev/null; then
  expect_contains "$t/err" "by faulthandler (SIGABRT; PYTHONFAULTHANDLER=1)"
fi
grep -qE "^ddl: suspect: rank 1 on ${NETNS_ADDRS[0]}: File \".*hang.py\", line 5 in lost_in_here" "$t/err" ||
  { cat "$t/err"; fail "rank 1's Python frame is not the suspect's"; }
grep -qE "^ddl: ranks 0,2: File \".*hang.py\", line 3 in wait_for_peers" "$t/err" || { cat "$t/err"; fail "ranks 0,2 not grouped"; }
sed -e 's/^dump = .*/dump = "SIGUSR1"/' "$t/py.toml" >"$t/usr1.toml"
rc=0; ddl_ssh run "$t/usr1.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" || rc=$?
[[ $rc == 5 ]] || { cat "$t/out" "$t/err"; fail "SIGUSR1 stall over ssh: exit $rc, want 5"; }
expect_contains "$t/err" "ddl: rank 2 on ${NETNS_ADDRS[1]}: killed by the dump signal SIGUSR1 (no handler for it)"
sleep 1
[[ $(netns_count_all "$mark") == 0 ]] || fail "a rank is left on a host"

# A py-spy that never returns: killed at dump_timeout; after kill -9 of ddl
# nothing is left on any host.
cat >"$t/fake-$mark/py-spy" <<'SH'
#!/bin/sh
# test double: a py-spy that never returns, deaf to TERM
trap "" TERM INT HUP
while :; do sleep 0.2; done
SH
chmod +x "$t/fake-$mark/py-spy"
{ cat "$NETNS_DIR/ssh.toml"; cat <<TOML
[job]
command = ["$t/nap-$mark", "600"]
grace = "1s"
[watchdog]
stall = "1s"
dump = "py-spy"
dump_timeout = "3s"
TOML
} >"$t/hung.toml"
start=$SECONDS
rc=0; ddl_ssh run "$t/hung.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" || rc=$?
[[ $rc == 5 ]] || { cat "$t/out" "$t/err"; fail "hung py-spy over ssh: exit $rc, want 5"; }
echo "hung py-spy over ssh: ddl exited after $((SECONDS - start))s (stall 1s + dump_timeout 3s + grace 1s)"
(( SECONDS - start <= 12 )) || fail "a hung dumper over ssh kept ddl $((SECONDS - start))s"
sleep 1
[[ $(netns_count_all "fake-$mark/py-spy") == 0 ]] || fail "a py-spy double is left on a host"
[[ $(netns_count_all "$mark") == 0 ]] || fail "a rank is left on a host"

sed -i 's/^dump_timeout = .*/dump_timeout = "60s"/' "$t/hung.toml"
ddl_ssh run "$t/hung.toml" -H "$spec" --backend ssh >"$t/out" 2>"$t/err" &
runner=$!
for ((i = 0; i < 100; i++)); do [[ $(netns_count_all "fake-$mark/py-spy") == 3 ]] && break; sleep 0.1; done
[[ $(netns_count_all "fake-$mark/py-spy") == 3 ]] || { cat "$t/err"; fail "the py-spy doubles did not start on the hosts"; }
ddl=$(pgrep -f -- "^$DDL run $t/hung.toml" | head -1)
kill -KILL "$ddl"
wait "$runner" 2>/dev/null || true
for ((i = 0; i < 50; i++)); do [[ $(netns_count_all "$mark") == 0 ]] && break; sleep 0.1; done
[[ $(netns_count_all "fake-$mark/py-spy") == 0 ]] || fail "a py-spy double is left on a host after kill -9 of ddl"
[[ $(netns_count_all "$mark") == 0 ]] || fail "a rank is left on a host after kill -9 of ddl"
# The shims end just after their ranks (a loaded host takes a moment).
for ((i = 0; i < 50; i++)); do [[ $(netns_count_all __ddl_) == 0 ]] && break; sleep 0.1; done
[[ $(netns_count_all __ddl_) == 0 ]] || fail "a shim is left on a host"
