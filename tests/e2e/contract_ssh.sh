#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The backend contract (backend_contract.inc) on the ssh backend: one rank on
# each of 4 hosts (network namespaces, each with its own real sshd, as
# tests/netns/hosts.inc sets up; needs root, else skipped). After every case
# no process but the sshd listener may be left in any host's namespace.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
# Before netns_up: its EXIT trap (tear the hosts down) must be the last one set.
source "$(dirname "$0")/backend_contract.inc"
netns_up 4
contract_base=$t/base.toml
{ printf '[launch]\nbackend = "ssh"\n'; cat "$NETNS_DIR/ssh.toml"; } >"$contract_base"
contract_use_netns_hosts
contract_args=(-H "$(netns_hostspec 1)")
contract_world=4
# KNOWN BUG (being fixed): the ssh backend checks a string command as if the
# whole shell string were a program name, so `command = "..."` fails with
# exit 3 "command not found: echo ...". The check stays as the contract says;
# its failure names the bug when that is what happened.
contract_string_bug="the ssh backend looks the shell text of a string command up as a program name"
contract_string_bug_says='command not found: echo "rank $DDL_RANK" | tr a-z A-Z'

contract_run_all
