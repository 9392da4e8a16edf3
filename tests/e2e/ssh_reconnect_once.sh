#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Connections kept across restarts (issue 32): a restart starts its ranks
# over the connections of the attempt before; a host whose connection died
# in between is reconnected once (its sshd still answers: the job goes on),
# and when that fails too the host is lost (exit 3, naming it). Counted on
# the hosts (NETNS_COUNT_SHELLS).
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
NETNS_COUNT_SHELLS=1 netns_up 2
a=("${NETNS_ADDRS[@]}")
# Rank 1 (h2) of attempt 0 fails; while ddl waits out the backoff, the test
# kills the sshd processes of h2's connection (drop_h2 1: its listener too).
cat >"$t/rank.sh" <<SH
echo "attempt=\$DDL_ATTEMPT rank=\$DDL_RANK"
[ "\$DDL_ATTEMPT" = 0 ] && [ "\$DDL_RANK" = 1 ] || exit 0
touch "$t/failed"
exit 1
SH
drop_h2() {
  local pid
  wait_files 1 "$t/failed"
  sleep 0.3
  for pid in $(ip netns pids "${NETNS_HOSTS[1]}"); do
    case $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) in
      *"[listener]"*) [[ $1 == 1 ]] && kill -9 "$pid" ;;
      "sshd: "*) kill -9 "$pid" ;;
    esac
  done
  return 0
}
job=$t/job.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
[job]
max_restarts = 1
command = ["sh", "$t/rank.sh"]
[launch]
backoff = "2s"
TOML
spec="${a[0]}:1,${a[1]}:1"

# 1. h2's connection dies between the attempts: one new connection to h2.
drop_h2 0 &
expect_exit 0 ddl_ssh run "$job" -H "$spec" --backend ssh
wait
for r in 0 1; do expect_contains "$t/out" "[$r] attempt=1 rank=$r"; done
# h1's restart runs through the relay its connection kept: no second shell.
[[ $(netns_shells 0) == 1 && $(netns_handshakes 0) == 1 ]] ||
  fail "h1: $(netns_shells 0) shells over $(netns_handshakes 0) connections, want 1 over 1"
netns_relays_gone
[[ $(netns_shells 1) == 2 && $(netns_handshakes 1) == 2 ]] ||
  fail "h2: $(netns_shells 1) shells over $(netns_handshakes 1) connections, want 2 over 2 (reconnected once)"
echo "ok: a connection lost between attempts is made again once"

# 2. h2's sshd is gone as well: the reconnection fails and h2 is lost.
rm -f "$t/failed"
drop_h2 1 &
expect_exit 3 ddl_ssh run "$job" -H "$spec" --backend ssh
wait
expect_contains "$t/out" "[1] attempt=0 rank=1"
expect_contains "$t/err" "${a[1]}: the connection is lost"
echo PASS
