#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host names and DNS (issue 32): `ddl render` and `ddl run --dry-run` never
# wait on DNS (a name that does not resolve renders by name), and a launch
# looks every name up at once under one deadline, naming each host that
# does not resolve. The launcher's namespace gets a DNS server that never
# answers (a UDP socket that reads nothing; 2s per lookup), so any lookup
# shows in the time.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
have python3 python3 || skip "python3 is not installed"
netns_up 1
mkdir -p "/etc/netns/$NETNS_CLIENT"
printf 'nameserver %s.254\noptions timeout:2 attempts:1\n' "$NETNS_NET" >"/etc/netns/$NETNS_CLIENT/resolv.conf"
netns_exec python3 -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('$NETNS_NET.254', 53)); time.sleep(300)" &
disown $!
for ((i = 0; i < 100; i++)); do
  [[ -n $(netns_exec ss -Hlun "sport = :53") ]] && break
  sleep 0.05
done

ms_of() { local start=$(($(date +%s%N) / 1000000)); "$@"; local rc=$?; took=$(($(date +%s%N) / 1000000 - start)); return $rc; }

# The black hole works: one lookup of a name takes the resolver's 2s.
ms_of netns_exec getent hosts x0.invalid && fail "x0.invalid resolved"
((took >= 1500)) || fail "the test's DNS answered in ${took}ms: it must never answer"

spec=""
for ((i = 1; i <= 40; i++)); do spec+="${spec:+,}x$i.invalid:1"; done

# render: no lookup, the names as given.
ms_of expect_exit 0 ddl_ssh render --format plan --backend ssh -H "$spec" -- true
((took < 1500)) || fail "render of 40 names that do not resolve took ${took}ms: it waited on DNS"
grep -qE "^39 +x40\.invalid +x40\.invalid " "$t/out" || { cat "$t/out"; fail "rank 39 not rendered by name"; }

# --dry-run: no lookup; the interface of such a host is not asked for (nor,
# when rank 0's address is such a name, any host's: each would look it up).
ms_of expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" --dry-run --backend ssh -H "${NETNS_ADDRS[0]}:1,$spec" -- true
((took < 1500)) || fail "a dry run of 40 names that do not resolve took ${took}ms: it waited on DNS"
grep -qE "^x7\.invalid +- +- +not asked: a dry run does not look x7\.invalid up in DNS$" "$t/out" ||
  { cat "$t/out"; fail "x7.invalid's interface row"; }
grep -qE "^${NETNS_ADDRS[0]//./\\.} +eth0 +${NETNS_ADDRS[0]//./\\.} " "$t/out" || { cat "$t/out"; fail "the numeric host's interface was not asked"; }

# A launch: every name looked up at once (about one 2s lookup, not 40 one
# after the other), each that does not resolve named; exit 3, nothing run.
ms_of expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" --backend ssh -H "${NETNS_ADDRS[0]}:1,$spec" -- touch "$t/ran"
((took < 4500)) || fail "a launch over 40 names that do not resolve took ${took}ms: not one deadline for all"
expect_contains "$t/err" "ddl: error: cannot resolve the address of every host:"
for i in 1 17 40; do
  expect_contains "$t/err" "  x$i.invalid: cannot resolve x$i.invalid: "
done
[[ $(grep -c "\.invalid: cannot resolve" "$t/err") == 40 ]] || { cat "$t/err"; fail "not every host named once"; }
[[ ! -e $t/ran ]] || fail "a rank ran although hosts did not resolve"
ms_of expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" --dry-run --backend ssh -H "$spec,${NETNS_ADDRS[0]}:1" -- true
((took < 1500)) || fail "a dry run with rank 0 on a name that does not resolve took ${took}ms: it waited on DNS"
grep -qE "^${NETNS_ADDRS[0]//./\\.} +- +- +not asked: a dry run does not look x1\\.invalid up in DNS$" "$t/out" ||
  { cat "$t/out"; fail "the numeric host's interface row when rank 0 is x1.invalid"; }
# One warning for the 41 hosts that have the same reason, not 41.
[[ $(grep -c "no interface toward rank 0" "$t/err") == 1 ]] || { cat "$t/err"; fail "not one warning for 41 hosts"; }
expect_contains "$t/err" "ddl: warning: 41 hosts (x1.invalid, x2.invalid, x3.invalid and 38 more): no interface toward rank 0 (x1.invalid): not asked: a dry run does not look x1.invalid up in DNS;"
echo PASS
