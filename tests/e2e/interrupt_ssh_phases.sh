#!/usr/bin/env bash
# Issue 14, over ssh on namespace hosts: Ctrl-C (130), SIGTERM (143) and
# --timeout (124) end ddl within a second or two while it connects to a
# black-holed host (connect_timeout 30s), and while the preflight check waits
# on a session that hangs after authentication (an sshd whose ForceCommand
# sleeps); no rank ever starts after the stop, and no shim is left on the
# hosts. `ddl hosts --check` is interruptible the same way.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2
mark="27.$$"   # the forced command's `sleep 27.PID`: a marker on host 2

now_ms() { date +%s%3N; }

# A black hole: an address on the test net whose MAC leads nowhere, so that
# SYNs vanish without an answer (no RST, no ICMP).
hole="$NETNS_NET.200"
ip -n "$NETNS_CLIENT" neigh replace "$hole" lladdr 02:00:00:de:ad:01 dev br0 nud permanent
cat "$NETNS_DIR/ssh.toml" >"$t/slow.toml"
sed -i 's/connect_timeout = "2s"/connect_timeout = "30s"/' "$t/slow.toml"

# start_ddl ARGS...: ddl (bounded) in the launcher's namespace, in the
# background; $ddl_pid is ddl itself.
start_ddl() {
  rm -rf "$t/up"; mkdir "$t/up"
  netns_unlock_pyenv 0  # a login the case before interrupted may have left pyenv's lock
  timeout -k 5 50 ip netns exec "$NETNS_CLIENT" "$DDL" "$@" >"$t/out" 2>"$t/err" &
  runner=$!
  for _ in $(seq 100); do ddl_pid=$(pgrep -P "$runner" | head -n 1) && [[ -n $ddl_pid ]] && break; sleep 0.05; done
}

# finish WANT LIMIT_MS WHAT: ddl's code, the time since $t0, no rank started,
# no shim left on any host.
finish() {
  local want=$1 limit=$2 what=$3 rc=0
  wait "$runner" || rc=$?
  local took=$(($(now_ms) - t0))
  [[ $rc == "$want" ]] || { cat "$t/err"; fail "$what: exit $rc, want $want"; }
  ((took < limit)) || fail "$what: took ${took}ms, limit ${limit}ms"
  [[ -z $(ls "$t/up") ]] || fail "$what: a rank started after the stop"
  # A host's shim may be waiting for its rank after answering the probes
  # (issue 32): it ends on the EOF of its channel, which a loaded sshd
  # passes on in a few seconds.
  # A login interrupted in root's pyenv rehash leaves its lock, which would
  # hold the host's next login shell (and this one) for 60 s.
  for _ in $(seq 50); do
    netns_unlock_pyenv 1
    [[ $(netns_count_all __ddl_) == 0 ]] && break
    sleep 0.1
  done
  [[ $(netns_count_all __ddl_) == 0 ]] || fail "$what: a shim is left on a host"
  echo "ok: $what -> $rc in ${took}ms"
}

rank='touch "'"$t"'/up/$DDL_RANK"; sleep 30'

# 1. Connecting to a black-holed host (and a good one).
for sig in INT TERM; do
  want=130; [[ $sig == TERM ]] && want=143
  start_ddl run "$t/slow.toml" -H "${NETNS_ADDRS[0]}:1,$hole:1" --backend ssh -- sh -c "$rank"
  sleep 0.5
  t0=$(now_ms); kill -s "$sig" "$ddl_pid"
  finish "$want" 2000 "SIG$sig while connecting to a black hole"
  expect_contains "$t/err" "interrupted by SIG$sig while"
done
t0=$(now_ms)
start_ddl run "$t/slow.toml" -H "${NETNS_ADDRS[0]}:1,$hole:1" --backend ssh --timeout 1s -- sh -c "$rank"
finish 124 3000 "--timeout 1s while connecting to a black hole"
expect_contains "$t/err" "timed out after 1s"

start_ddl hosts "$t/slow.toml" -H "${NETNS_ADDRS[0]}:1,$hole:1" --backend ssh --check
sleep 0.5
t0=$(now_ms); kill -INT "$ddl_pid"
finish 130 2000 "SIGINT during hosts --check of a black hole"

# 2. A session that hangs after authentication: host 2's sshd forces a sleep.
ns=${NETNS_HOSTS[1]}
netns_restart_sshd 1 "ForceCommand sleep $mark"

# wait_hang: until host 2 runs the forced sleep (ddl is past authentication).
# The forced command is sshd's, not the job's: it outlives its session, so
# each run first kills the previous run's.
wait_hang() {
  for _ in $(seq 200); do (($(netns_count 1 "sleep $mark") > 0)) && return 0; sleep 0.05; done
  cat "$t/err"; fail "ddl never reached host 2's forced command"
}
spec="${NETNS_ADDRS[0]}:2,${NETNS_ADDRS[1]}:1"
# The first command on host 2 is the network interface probe...
pkill -KILL -f "sleep $mark" 2>/dev/null || true
start_ddl run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- sh -c "$rank"
wait_hang
t0=$(now_ms); kill -INT "$ddl_pid"
finish 130 2000 "SIGINT while the interface probe hangs"
expect_contains "$t/err" "while probing each host's network interface"
# ...unless the user names every interface variable: then it is the count of
# its GPUs ([launch] bind_gpus, over the connection the preflight then
# takes), and without bind_gpus the preflight, which these cases stop. (A
# stop during the GPU count left a host's shim for over 5 s in CI twice, and
# never here: not asserted until that is understood.)
named=(-x GLOO_SOCKET_IFNAME=lo -x NCCL_SOCKET_IFNAME=lo -x HOROVOD_GLOO_IFACE=lo)
{ cat "$NETNS_DIR/ssh.toml"; printf '[launch]\nbind_gpus = false\n'; } >"$t/unbound.toml"
for sig in INT TERM; do
  want=130; [[ $sig == TERM ]] && want=143
  pkill -KILL -f "sleep $mark" 2>/dev/null || true
  start_ddl run "$t/unbound.toml" -H "$spec" --backend ssh "${named[@]}" -- sh -c "$rank"
  wait_hang
  t0=$(now_ms); kill -s "$sig" "$ddl_pid"
  finish "$want" 2000 "SIG$sig while the preflight check hangs"
  expect_contains "$t/err" "while waiting for the preflight check"
done
pkill -KILL -f "sleep $mark" 2>/dev/null || true
start_ddl run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh --timeout 2s -- sh -c "$rank"
t0=$(now_ms)
wait_hang
finish 124 3000 "--timeout 2s while the preflight check hangs"
expect_contains "$t/err" "timed out after 2s"
for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null || true; done
