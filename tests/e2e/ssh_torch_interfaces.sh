#!/usr/bin/env bash
# Real PyTorch DDP (gloo) on the 4 namespace hosts, one rank each, with no -x
# and no GLOO_SOCKET_IFNAME anywhere: h1 and h3 resolve their own hostname to
# 127.0.1.1 (Debian's default), h2 and h4 not at all (gloo alone would then
# advertise a loopback address), and h3's interface is named ens5, not eth0.
# ddl finds, on each host, the interface its route to rank 0 leaves from and
# sets GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME and HOROVOD_GLOO_IFACE per host;
# --dry-run shows the choice and why; a value the user sets is kept.
# (issue 13, item 2)
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch with gloo is not importable"
NETNS_DEBIAN_NAMES=1 netns_up 4
# Interface names differ between hosts: h3's is ens5.
h3=${NETNS_HOSTS[2]}
ip -n "$h3" link set eth0 down
ip -n "$h3" link set eth0 name ens5
ip -n "$h3" link set ens5 up
ip -n "$h3" route add default via "$NETNS_NET.254" 2>/dev/null || true
[[ $(ip netns exec "${NETNS_HOSTS[0]}" getent ahostsv4 h1) == 127.0.1.1* ]] || fail "h1 does not resolve to 127.0.1.1"
# (h2 is in no hosts file; a DNS query for it would only time out here.)
if grep -qw h2 /etc/hosts "/etc/netns/${NETNS_HOSTS[1]}/hosts"; then fail "h2 is in a hosts file"; fi

job=$t/job.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
[job]
command = ["$python", "$DDL_SOURCE_DIR/tests/fixtures/clients/torch_allreduce.py"]
grace = "2s"
[torch]
master_port = 29533
TOML
spec=$(netns_hostspec 2)
a=("${NETNS_ADDRS[@]}")

# --dry-run: per host the interface, its address and why.
expect_exit 0 ddl_ssh run "$job" -H "$spec" --backend ssh --dry-run
expect_contains "$t/out" "network interface per host (toward rank 0 at ${a[0]}; sets GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME, HOROVOD_GLOO_IFACE):"
grep -qE "^${a[0]//./\\.} +eth0 +${a[0]//./\\.} +it holds rank 0's address$" "$t/out" || { cat "$t/out"; fail "h1's row"; }
grep -qE "^${a[2]//./\\.} +ens5 +${a[2]//./\\.} +it holds ${a[2]//./\\.}, where this host's route to ${a[0]//./\\.} leaves from$" "$t/out" ||
  { cat "$t/out"; fail "h3's row"; }
expect_contains "$t/out" "GLOO_SOCKET_IFNAME=ens5"
expect_contains "$t/out" "NCCL_SOCKET_IFNAME=eth0"

# The real job: one rank per host, one allreduce across the 4 hosts.
DDL_TIMEOUT=100 expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 1)" --backend ssh
for r in 0 1 2 3; do
  expect_contains "$t/out" "[$r] rank $r of 4: allreduce sum 10 (want 10) ok"
done

# A host the launcher reaches at a loopback address (localhost, a name that
# Debian maps to 127.0.1.1) is this machine: with a remote host in the job,
# MASTER_ADDR is this machine's address toward it, never loopback.
expect_exit 0 ddl_ssh render "$job" -H "localhost:1,${a[1]}:1" --backend ssh --format env --rank 1
expect_contains "$t/out" "MASTER_ADDR=$NETNS_NET.254"

# What the user sets is kept, per variable: -x and env_pass.
expect_exit 0 ddl_ssh run "$job" -H "$spec" --backend ssh -x GLOO_SOCKET_IFNAME=mine -- \
  sh -c 'echo "$GLOO_SOCKET_IFNAME $NCCL_SOCKET_IFNAME $HOROVOD_GLOO_IFACE"'
expect_contains "$t/out" "[0] mine eth0 eth0"
expect_contains "$t/out" "[4] mine ens5 ens5"
printf '[job]\nenv_pass = ["NCCL_SOCKET_IFNAME"]\n' >"$t/pass.toml"
cat "$NETNS_DIR/ssh.toml" >>"$t/pass.toml"
NCCL_SOCKET_IFNAME=passed expect_exit 0 ddl_ssh run "$t/pass.toml" -H "$spec" --backend ssh -- \
  sh -c 'echo "$GLOO_SOCKET_IFNAME $NCCL_SOCKET_IFNAME"'
expect_contains "$t/out" "[5] ens5 passed"
