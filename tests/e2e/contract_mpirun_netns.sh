#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The backend contract (backend_contract.inc) on the mpirun backend across
# hosts: 2 ranks on each of 2 network-namespace hosts (real sshd each, as
# tests/netns/hosts.inc sets up; needs root, else skipped), reached by a real
# Open MPI mpirun through `ddl rsh`. After every case no process but the
# sshd listener (no orted, no rank) may be left in any host's namespace.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
# Before netns_up: its EXIT trap (tear the hosts down) must be the last one set.
source "$(dirname "$0")/backend_contract.inc"
# Open MPI's mpirun cannot forward SIGINT (ess_base_forward_signals refuses
# it): on ddl's SIGINT it ends the ranks itself, SIGTERM and SIGKILL a second
# later, sometimes SIGKILL alone (man page, "mpirun backend"). Exit 130, the
# time bound and nothing left are still checked.
contract_interrupt_signal=""
netns_up 2
contract_base=$t/base.toml
{ printf '[launch]\nbackend = "mpirun"\n'; cat "$NETNS_DIR/ssh.toml"; } >"$contract_base"
contract_use_netns_hosts
contract_args=(-H "$(netns_hostspec 2)")
contract_world=4
contract_run_all
