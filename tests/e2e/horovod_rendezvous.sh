#!/usr/bin/env bash
# Horovod's gloo rendezvous (HTTP key/value, the protocol of horovodrun's
# http_server.py and horovod/common/gloo/http_store.cc) served by ddl, with
# HOROVOD_GLOO_RENDEZVOUS_ADDR/PORT, HOROVOD_CONTROLLER=gloo,
# HOROVOD_CPU_OPERATIONS=gloo and HOROVOD_GLOO_TIMEOUT_SECONDS set.
# Horovod cannot be installed here: the ranks run a PROTOCOL CLIENT written
# from that protocol (tests/fixtures/clients/horovod_http_client.py), NOT
# Horovod. Local ranks, then ranks on 4 namespace hosts over ssh.
# (issue 13, item 4)
source "$(dirname "$0")/common.inc"
client=$DDL_SOURCE_DIR/tests/fixtures/clients/horovod_http_client.py
python=$(command -v python3) || skip "python3 is not installed"
cat >"$t/job.toml" <<TOML
[job]
frameworks = ["horovod"]
command = ["$python", "$client"]
grace = "2s"
[rendezvous]
timeout = "45s"
TOML

# What --dry-run shows, and what the user sets is kept.
expect_exit 0 "$DDL" run "$t/job.toml" --np 2 --dry-run -x HOROVOD_CPU_OPERATIONS=mpi
for want in "HOROVOD_GLOO_RENDEZVOUS_ADDR='<rendezvous-address>'" "HOROVOD_GLOO_RENDEZVOUS_PORT='<horovod-port>'" HOROVOD_CONTROLLER=gloo \
  HOROVOD_CPU_OPERATIONS=mpi HOROVOD_GLOO_TIMEOUT_SECONDS=45 HOROVOD_GLOO_IFACE=lo; do
  expect_contains "$t/out" "$want"
done
expect_not_contains "$t/out" "HOROVOD_CPU_OPERATIONS=gloo"
# Under mpirun the ranks are one MPI world: no gloo rendezvous.
if have mpirun openmpi-bin; then
  expect_exit 0 "$DDL" run "$t/job.toml" --np 2 --backend mpirun --dry-run
  expect_not_contains "$t/out" "HOROVOD_CONTROLLER"
  expect_not_contains "$t/out" "HOROVOD_GLOO_RENDEZVOUS"
fi

# 4 local ranks: one host, so local scope of 4, cross scopes of 1.
expect_exit 0 timeout -k 5 60 "$DDL" run "$t/job.toml" --np 4
expect_contains "$t/out" "[0] rank 0: malformed requests refused (400, 413), missing key 404"
for r in 0 1 2 3; do
  expect_contains "$t/out" "[$r] rank $r: global 4 ranks on localhost; local 4; cross 1; controller gloo gloo"
done

# 8 ranks on 4 hosts over ssh: the rendezvous is dialled from every host.
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 4
cat "$NETNS_DIR/ssh.toml" >>"$t/job.toml"
expect_exit 0 ddl_ssh run "$t/job.toml" -H "$(netns_hostspec 2)" --backend ssh
hosts=$(printf '%s\n' "${NETNS_ADDRS[@]}" | sort | paste -sd,)
for r in 0 1 2 3 4 5 6 7; do
  expect_contains "$t/out" "[$r] rank $r: global 8 ranks on $hosts; local 2; cross 4; controller gloo gloo"
done
