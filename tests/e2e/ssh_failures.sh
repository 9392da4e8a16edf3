#!/usr/bin/env bash
# Over ssh on 4 hosts: a failing rank ends the gang with its code; SIGINT;
# kill -9 of ddl; a host that dies mid-run. Each time, no rank process (nor
# ddl's relay, which runs a host's two ranks) may be left on any host.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 4
spec=$(netns_hostspec 2)
mark="29.$$"   # sleep 29.PID: a marker in the ranks' command lines

expect_none_left() {
  local left; left=$(netns_count_all "sleep $mark")
  [[ $left == 0 ]] || fail "$1: $left rank processes left on the hosts"
  netns_relays_gone  # the ranks of a host ran under ddl's relay
}

# Starts a gang whose ranks touch $t/up/RANK and sleep; sets $runner.
start_sleepers() {
  rm -rf "$t/up"; mkdir "$t/up"
  # timeout (not a function) is the background job: it relays INT to ddl.
  timeout -k 5 60 ip netns exec "$NETNS_CLIENT" "$DDL" run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- \
    sh -c 'touch "'"$t"'/up/$DDL_RANK"; sleep '"$mark"'; exit 0' >"$t/out" 2>"$t/err" &
  runner=$!
  wait_files 8 "$t/up/*"
}

# 1. Rank 5 exits 3: everything ends, exit code 3.
start=$SECONDS
expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- \
  sh -c 'if [ "$DDL_RANK" = 5 ]; then sleep 1; exit 3; fi; sleep '"$mark"
((SECONDS - start < 20)) || fail "a failing rank took $((SECONDS - start))s to end the gang"
expect_none_left "after a failing rank"

# 2. SIGINT to ddl: forwarded, exit 130.
start_sleepers
kill -INT "$runner"
rc=0; wait "$runner" || rc=$?
[[ $rc == 130 ]] || fail "SIGINT: exit $rc, want 130: $(cat "$t/err")"
expect_none_left "after SIGINT"

# 3. kill -9 of ddl: the shims see EOF and end their groups.
start_sleepers
ddl_pid=$(pgrep -P "$runner" | head -n 1)
kill -9 "$ddl_pid"
wait "$runner" 2>/dev/null || true
for _ in $(seq 100); do [[ $(netns_count_all "sleep $mark") == 0 ]] && break; sleep 0.1; done
expect_none_left "10s after kill -9 of ddl"

# 4. Host 3 dies mid-run (link down, all its processes killed): noticed
# through keepalives within connect_timeout (2s) and some, exit 3. Unnoticed,
# ddl would wait for host 3 for ever; the bound leaves room for CI's load.
start_sleepers
start=$SECONDS
netns_crash_host 2
rc=0; wait "$runner" || rc=$?
((SECONDS - start < 40)) || fail "a dead host took $((SECONDS - start))s to notice"
[[ $rc == 3 ]] || fail "dead host: exit $rc, want 3: $(cat "$t/err")"
expect_contains "$t/err" "${NETNS_ADDRS[2]}"
expect_none_left "after a host died"
