#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The backend contract (backend_contract.inc) on the slurm backend: 3 ranks
# (h1:2, h2:1) as one srun step of an allocation on a real Slurm
# (tests/slurm/testbed.inc; needs root, else skipped). ddl runs on the login
# node with the allocation's SLURM_JOB_ID, as it would inside salloc, so that
# the contract's signals reach ddl itself.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/backend_contract.inc"
source "$DDL_SOURCE_DIR/tests/slurm/testbed.inc"
slurm_up 2
granted=$(slurm_login salloc --no-shell -N2 --ntasks-per-node=2 2>&1) || fail "salloc failed: $granted"
job=$(sed -n 's/.*Granted job allocation \([0-9][0-9]*\).*/\1/p' <<<"$granted")
[[ -n $job ]] || fail "no allocation: $granted"
contract_base=$t/base.toml
printf '[launch]\nbackend = "slurm"\n' >"$contract_base"
contract_prefix=(ip netns exec "$NETNS_CLIENT" env "SLURM_JOB_ID=$job")
contract_args=(-H h1:2,h2:1)
contract_world=3
# The test bed's daemons name $t in their command lines: not rank processes;
# nor are Slurm's own helpers (slurmctld's slurmscriptd, a step's slurmstepd,
# which slurmd runs and ends in its own time), which the isolated test's
# left_running also names.
contract_ignore='^[0-9]+ (slurmctld|slurmd|munged|: slurmscriptd|slurmstepd: |unshare|sh -c hostname|sshd: /usr/sbin/sshd -D -e -f .* \[listener\])'
# KNOWN BUG (not ddl's launch path; reported): the SIGINT case leaves each
# rank's background child (`sleep 60 &`, which ignores SIGINT as sh makes
# every background job) running: the test bed's proctrack/linuxproc loses it
# once the rank exits, and ddl has no process group of the rank's own to end
# (Slurm puts a node's tasks in one group). Every other case runs; Ctrl-C on
# ranks without such children is slurm_backend.sh's.
contract_case "string command" contract_string_command
contract_case "array command" contract_array_command
contract_case "env" contract_env
contract_case "failing rank" contract_failing_rank
contract_case "repeated signal" contract_repeated_signal
contract_report
