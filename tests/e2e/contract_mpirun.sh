#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The backend contract (backend_contract.inc) on the mpirun backend: 3 ranks
# on this machine under a real Open MPI mpirun (as mpirun_local.sh drives it).
source "$(dirname "$0")/common.inc"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
source "$(dirname "$0")/backend_contract.inc"
# Open MPI's mpirun cannot forward SIGINT (ess_base_forward_signals refuses
# it): on ddl's SIGINT it ends the ranks itself, SIGTERM and SIGKILL a second
# later, sometimes SIGKILL alone (man page, "mpirun backend"). Exit 130, the
# time bound and nothing left are still checked.
contract_interrupt_signal=""
contract_base=$t/base.toml
printf '[launch]\nbackend = "mpirun"\n' >"$contract_base"
contract_args=(-H localhost:3)
contract_world=3
contract_run_all
