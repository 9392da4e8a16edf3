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
contract_prefix=(ip netns exec "$NETNS_CLIENT")
contract_args=(-H "$(netns_hostspec 1)")
contract_world=4
# KNOWN BUG (being fixed): the ssh backend checks a string command as if the
# whole shell string were a program name, so `command = "..."` fails with
# exit 3 "command not found". The check stays as the contract says.
contract_string_note="known ssh bug: a string command's shell text is looked up as a program name"

# The sshd listeners name $t in their command lines: not rank processes.
contract_ignore='^[0-9]+ sshd: /usr/sbin/sshd -D -e -f .* \[listener\]'

# Every process in host i's namespace but its sshd listener, as "hN: PID CMD".
contract_hosts_clean() {
  local i pid cmd
  for i in "${!NETNS_HOSTS[@]}"; do
    for pid in $(ip netns pids "${NETNS_HOSTS[$i]}" 2>/dev/null); do
      cmd=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || continue
      [[ -z $cmd || $cmd == "sshd: /usr/sbin/sshd -D -e -f $NETNS_DIR/h$((i + 1))_sshd [listener]"* ]] && continue
      echo "h$((i + 1)): $pid $cmd"
    done
  done
}
contract_run_all
