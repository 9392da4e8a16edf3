#!/usr/bin/env bash
# While ddl connects to and readies many hosts, a terminal shows one status
# line on stderr ("ddl: connected 1/2, slowest HOST (1.2s)"), erased when
# done; a pipe shows nothing of it, and -v logs one line per host instead.
# The slow host is h2 with its sshd stopped for 1.2 s, less than the test
# bed's connect_timeout (2 s), more than the line's 0.5 s delay. (issue 19)
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v script >/dev/null || skip "script (bsdutils) is not installed"
netns_up 2
hosts="${NETNS_ADDRS[0]}:1,${NETNS_ADDRS[1]}:1"
slow=${NETNS_ADDRS[1]}

# h2's sshd accepts (the kernel does) but says nothing for 1.2 s.
stall_h2() {
  local pid pids
  # A process that ends between the listing and the kill is no matter.
  pids=$(ip netns pids "${NETNS_HOSTS[1]}")
  for pid in $pids; do kill -STOP "$pid" 2>/dev/null || true; done
  (sleep 1.2; for pid in $pids; do kill -CONT "$pid" 2>/dev/null || true; done) &
}

stall_h2
script -qfec "ip netns exec $NETNS_CLIENT $DDL run $NETNS_DIR/ssh.toml -H $hosts -- true" "$t/typescript" \
  >"$t/out" 2>&1 || fail "ddl on a terminal failed: $(cat "$t/out")"
wait
expect_contains "$t/typescript" "ddl: connected 1/2, slowest $slow ("
# Erased at the end: the typescript's last bytes before script's footer.
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); d = d[:d.rfind(b"\nScript done")]
sys.exit(0 if d.endswith(b"\r\x1b[K") else 1)' "$t/typescript" || fail "the status line was not erased"

stall_h2
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$hosts" -- true
wait
expect_not_contains "$t/err" "ddl: connected"

stall_h2
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$hosts" -v -- true
wait
expect_contains "$t/err" "connected $slow (2/2) in"
expect_contains "$t/err" "ready "
echo ok
