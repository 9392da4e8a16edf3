#!/usr/bin/env bash
# Hosts named by ssh config aliases (Host node1 / HostName ADDR): ddl connects
# as ssh would (the alias's own settings apply), and uses the HostName as the host's address everywhere a rank
# dials another (MASTER_ADDR, TF_CONFIG, the rendezvous route), so a real
# allgather through the rendezvous works across the namespace hosts.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v python3 >/dev/null || skip "python3 is not installed"
netns_up 2

config=$t/ssh_config
# The aliases' own settings must apply too: any other name gets a user that
# cannot log in, so connecting by address instead of alias fails.
{
  echo "Host node1"; echo "  HostName ${NETNS_ADDRS[0]}"; echo "  User $(id -un)"
  echo "Host node2"; echo "  HostName ${NETNS_ADDRS[1]}"; echo "  User $(id -un)"
  echo "Host *"; echo "  User nobody"
  cat "$NETNS_DIR/ssh_config"
} >"$config"
job=$t/alias.toml
sed "s#^config = \"none\"#config = \"$config\"#" "$NETNS_DIR/ssh.toml" >"$job"
printf '[job]\nframeworks = ["torch", "tensorflow"]\n' >>"$job"

# What ranks are told, without launching: addresses, not aliases.
expect_exit 0 "$DDL" render "$job" -H node1:1,node2:1 --backend ssh --format env --rank 1
expect_contains "$t/out" "MASTER_ADDR=${NETNS_ADDRS[0]}"
expect_contains "$t/out" "\"${NETNS_ADDRS[1]}:2222\""
expect_not_contains "$t/out" "node1:"

client="$DDL_SOURCE_DIR/tests/fixtures/clients/rdzv_client.py"
expect_exit 0 ddl_ssh run "$job" -H node1:1,node2:1 --backend ssh -- \
  sh -c 'echo "master=$MASTER_ADDR on $(hostname)"; exec python3 "$0" allgather' "$client"
expect_contains "$t/out" "[0] master=${NETNS_ADDRS[0]} on h1"
expect_contains "$t/out" "[1] master=${NETNS_ADDRS[0]} on h2"
expect_contains "$t/out" "[1] gathered rank-0,rank-1"
echo ok
