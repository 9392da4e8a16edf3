#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The backend contract (backend_contract.inc) on the local backend: 3 ranks
# on this machine.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/backend_contract.inc"
contract_base=$t/base.toml
printf '[launch]\nbackend = "local"\n' >"$contract_base"
contract_args=(--np 3)
contract_world=3
contract_run_all
