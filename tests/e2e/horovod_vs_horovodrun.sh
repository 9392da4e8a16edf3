#!/usr/bin/env bash
# `ddl horovodrun` beside the real `horovodrun` (Horovod 0.28.1, issue 39):
# the same line, `-np 4 -H h1:2,h2:2 python train.py`, on 2 namespace hosts
# with real horovod.torch. The same world and the same allreduce result, and
# each rank's Horovod variables compared (tests/fixtures/clients/
# compare_ranks.py): what may differ is listed below with why, under Gloo
# and under MPI. Elastic Horovod: horovod_elastic.sh.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(framework_python horovod.torch)
venv_bin=$(dirname "$python")
[[ -x $venv_bin/horovodrun ]] || fail "$venv_bin/horovodrun is missing beside horovod.torch"
NETNS_NAMED=1 netns_up 2
# horovodrun looks for the hosts' common NIC (eth0) on the launcher too
# (network.get_driver_ip: KeyError 'eth0' where it has another name), so
# the launcher's bridge is named as the hosts' NIC.
ip -n "$NETNS_CLIENT" link set br0 down
ip -n "$NETNS_CLIENT" link set br0 name eth0
ip -n "$NETNS_CLIENT" link set eth0 up
# horovodrun reaches the hosts through the `ssh` in its PATH (this config),
# ddl with the same key and known_hosts in [ssh] (--job).
mkdir -p "$t/bin" "$t/work"
printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$NETNS_DIR/ssh_config" >"$t/bin/ssh"
chmod +x "$t/bin/ssh"
[[ -x $venv_bin/python ]] || fail "$venv_bin/python is missing"
cp "$DDL_SOURCE_DIR/tests/fixtures/clients/horovod_allreduce.py" "$t/work/train.py"
cd "$t/work"
in_client() { timeout -k 5 "$1" ip netns exec "$NETNS_CLIENT" env PATH="$t/bin:$venv_bin:$PATH" "${@:2}"; }

# run NAME LAUNCHER... : the line under one launcher, each rank's record in $t/NAME.
run() {
  local name=$1; shift
  mkdir -p "$t/$name"
  RANK_ENV_DIR=$t/$name expect_exit 0 in_client 180 "$@" -np 4 -H h1:2,h2:2 python train.py
  cp "$t/out" "$t/$name.out"
}
# same_world NAME CONTROLLER: every rank's line, as Horovod sees its world.
same_world() {
  local r want
  for r in 0 1 2 3; do
    want="rank $r of 4 (local $((r % 2)) of 2, cross $((r / 2)) of 2, $2) on h$((r / 2 + 1)): allreduce sum 10 (want 10) ok"
    expect_contains "$t/$1.out" "$want"
  done
}
# compare PEER DDL KEY=WHY...: each rank's variables side by side.
compare() {
  python3 "$DDL_SOURCE_DIR/tests/fixtures/clients/compare_ranks.py" "$t/$1" "$t/$2" "${@:3}" >"$t/compare" ||
    { cat "$t/compare"; fail "ddl horovodrun's ranks ($2) differ from horovodrun's ($1)"; }
  echo "== $1 | $2"
  cat "$t/compare"
}
ddl_hvd=("$DDL" horovodrun --job "$NETNS_DIR/ssh.toml")

# The same line. horovodrun picks Horovod's MPI controller (mpirun) where
# Horovod was built with MPI, as here; ddl picks Gloo unless --mpi (it
# cannot see how Horovod was built): the same world and sum either way.
run peer-mpi horovodrun
same_world peer-mpi mpi
run ddl-gloo "${ddl_hvd[@]}"
same_world ddl-gloo gloo
# Gloo under both: the variables horovodrun's gloo_run sets, side by side.
run peer-gloo horovodrun --gloo
same_world peer-gloo gloo
compare peer-gloo ddl-gloo \
  "env.HOROVOD_GLOO_RENDEZVOUS_PORT=a free port each run" \
  "env.HOROVOD_GLOO_TIMEOUT_SECONDS=ddl: [rendezvous] timeout; horovodrun leaves Horovod's 30 s default" \
  "env.GLOO_SOCKET_IFNAME=ddl sets it beside HOROVOD_GLOO_IFACE (torch's gloo reads it)" \
  "env.NCCL_ASYNC_ERROR_HANDLING=ddl's default frameworks keep torch's (RANK, MASTER_ADDR, ... too); horovodrun sets none" \
  "env.PMI_PORT=ddl's MPI singleton guard: a rank that links MPI must not start an MPI world of its own"
# MPI under both: mpirun's world.
run ddl-mpi "${ddl_hvd[@]}" --mpi
same_world ddl-mpi mpi
compare peer-mpi ddl-mpi \
  "env.HOROVOD_*=ddl renders Horovod's variables under every backend (they agree with MPI's world); horovodrun's mpirun leaves them to MPI" \
  "env.NCCL_SOCKET_IFNAME=horovodrun -x's the hosts' common NIC; ddl's mpirun backend looks for none (man: NCCL_SOCKET_IFNAME)" \
  "env.NCCL_ASYNC_ERROR_HANDLING=ddl's default frameworks keep torch's; horovodrun sets none"
echo "ok: ddl horovodrun and horovodrun give the same world, the same sum and the same variables"
