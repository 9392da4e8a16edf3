#!/usr/bin/env bash
# `ddl hosts --check` over ssh: two namespace hosts answer (reachable, the
# remote ddl's version, GPU count), an unused address does not (bounded, its
# error shown); exit 3 when any host fails. Table and --json.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2
dead="$NETNS_NET.201"
spec="${NETNS_ADDRS[0]},${NETNS_ADDRS[1]},$dead"
version=$("$DDL" --version | awk '{ print $2 }')

expect_exit 0 ddl_ssh hosts "$NETNS_DIR/ssh.toml" -H "${NETNS_ADDRS[0]},${NETNS_ADDRS[1]}" --backend ssh --check
expect_contains "$t/out" "REACHABLE"
expect_contains "$t/out" "${NETNS_ADDRS[1]}"

# The dead host's error must be connect_timeout's (2s) "Timeout", not the
# kernel's "No route to host" (3s); the wall-clock bound only guards a hang.
start=$SECONDS
expect_exit 3 ddl_ssh hosts "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh --check --json
((SECONDS - start < 60)) || fail "--check took $((SECONDS - start))s with one dead host"
python3 - "$t/out" "$version" "${NETNS_ADDRS[0]}" "$dead" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
version, good, dead = sys.argv[2], sys.argv[3], sys.argv[4]
hosts = {h["name"]: h for h in doc["hosts"]}
assert len(hosts) == 3, hosts
h = hosts[good]
assert h["reachable"] is True and h["ddl_version"] == version and h["gpu_count"] == 0 and h["error"] is None, h
d = hosts[dead]
assert d["reachable"] is False and d["ddl_version"] is None and d["error"], d
assert f"Timeout connecting to {dead}" in d["error"], d
PY

# A remote_ddl that is not there.
sed 's|^\[ssh\]$|[ssh]\nremote_ddl = "/nonexistent/ddl"|' "$NETNS_DIR/ssh.toml" >"$t/missing.toml"
expect_exit 3 ddl_ssh hosts "$t/missing.toml" -H "${NETNS_ADDRS[0]}" --backend ssh --check
expect_contains "$t/out" "ddl not found at /nonexistent/ddl"
