#!/usr/bin/env bash
# The defaults on real remote hosts (network namespaces with sshd): with no
# --backend, hosts that are not this machine run over ssh (auto), never on
# the launcher; torch.master_port is looked for on rank 0's host over ssh
# (free by default, an explicit port that is taken there: exit 3 naming it).
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2
spec="${NETNS_ADDRS[0]}:2,${NETNS_ADDRS[1]}:2"

# No --backend: auto takes ssh, every rank on its own host.
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname) port=$MASTER_PORT"'
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1))"; done
ports=$(grep -o 'port=[0-9]*' "$t/out" | sort -u)
[[ $(wc -l <<<"$ports") == 1 ]] || fail "ranks disagree on MASTER_PORT: $ports"
port=${ports#port=}
((port >= 20000 && port <= 32767)) || fail "MASTER_PORT $port is not a picked one"
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" --dry-run -- true
expect_contains "$t/out" "backend ssh (auto: host '${NETNS_ADDRS[0]}' is not this machine)"

# A port something listens on, on rank 0's host: refused before any rank.
held=29777
ip netns exec "${NETNS_HOSTS[0]}" python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1)
print("listening", flush=True); time.sleep(60)' "$held" >"$t/listener.out" &
listener=$!
for _ in $(seq 50); do grep -q listening "$t/listener.out" && break; sleep 0.1; done
cp "$NETNS_DIR/ssh.toml" "$t/port.toml"
printf '[torch]\nmaster_port = %s\n' "$held" >>"$t/port.toml"
expect_exit 3 ddl_ssh run "$t/port.toml" -H "$spec" -- touch "$t/ran"
expect_contains "$t/err" "torch.master_port: port $held is already in use on ${NETNS_ADDRS[0]}"
[[ ! -e $t/ran ]] || fail "a rank ran"
# Free on rank 0's host (the listener is only on h1's): kept as given.
expect_exit 0 ddl_ssh run "$t/port.toml" -H "${NETNS_ADDRS[1]}:1" -- sh -c 'echo port=$MASTER_PORT'
expect_contains "$t/out" "port=$held"
kill "$listener"; wait "$listener" 2>/dev/null || true
