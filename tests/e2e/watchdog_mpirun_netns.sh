#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The watchdog's stack dumps under the mpirun backend (issue 41, item 3): a C
# MPI program on 2 network-namespace hosts (real sshd each), rank 1 asleep
# before MPI_Barrier, the others in it. With dump = "gdb" (and "auto") ddl
# runs the dumper on each rank's host (through mpirun's rsh agent, `ddl
# rsh`): every rank's gdb stack is its evidence (rank 1 in its sleep), exit 5,
# and nothing of the job is left on any host. (stall = 8s: MPI_Init over ssh can
# take seconds on a loaded machine, with no line printed.)
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
have gdb gdb || exit 0
mark="wdm$$x$RANDOM"
netns_up 2
mpicc -g -O0 -o "$t/sleeper-$mark" "$DDL_SOURCE_DIR/tests/fixtures/mpi/barrier_sleep.c"
chmod 755 "$t"


for tool in gdb auto; do
  { printf '[launch]\nbackend = "mpirun"\n'; cat "$NETNS_DIR/ssh.toml"; cat <<TOML
[job]
command = ["$t/sleeper-$mark"]
grace = "1s"
[watchdog]
stall = "8s"
dump = "$tool"
dump_timeout = "30s"
TOML
  } >"$t/$tool.toml"
  rc=0; ddl_ssh run "$t/$tool.toml" -H "$(netns_hostspec 2)" >"$t/out" 2>"$t/err" || rc=$?
  [[ $rc == 5 ]] || { cat "$t/out" "$t/err"; fail "dump = $tool: exit $rc, want 5"; }
  expect_not_contains "$t/err" "set watchdog.dump to a signal"
  for r in 0 1 2 3; do
    grep -qE "^\[$r\]:? ?ddl: stacks of pid [0-9]+ on h$((r / 2 + 1)) by gdb:" "$t/err" ||
      { cat "$t/err"; fail "dump = $tool: no gdb stack of rank $r from h$((r / 2 + 1))"; }
  done
  grep -qE "^\[1\].*#[0-9]+ .*(nanosleep|sleep)" "$t/err" || { cat "$t/err"; fail "dump = $tool: rank 1 not in its sleep"; }
  grep -qE "^\[0\].*#[0-9]+ .*(MPI_Barrier|opal_progress)" "$t/err" ||
    { cat "$t/err"; fail "dump = $tool: rank 0 not in MPI_Barrier"; }
  grep -qE "^ddl: suspect: rank 1 on ${NETNS_ADDRS[0]}: in .*(nanosleep|sleep)" "$t/err" ||
    { cat "$t/err"; fail "dump = $tool: rank 1 is not the suspect"; }
  netns_hosts_clean "dump = $tool"
done

# The ranks on this machine (mpirun's own children): the dumper runs here.
sed -e '/^\[ssh\]/,/^\[job\]/{/^\[job\]/!d}' "$t/gdb.toml" >"$t/local.toml"
rc=0; timeout -k 5 60 "$DDL" run "$t/local.toml" --np 3 >"$t/out" 2>"$t/err" || rc=$?
[[ $rc == 5 ]] || { cat "$t/out" "$t/err"; fail "ranks here: exit $rc, want 5"; }
for r in 0 1 2; do
  grep -qE "^\[$r\]:? ?ddl: stacks of pid [0-9]+ on $(uname -n) by gdb:" "$t/err" ||
    { cat "$t/err"; fail "ranks here: no gdb stack of rank $r"; }
done
grep -qE "^ddl: suspect: rank 1 on [^:]+: in .*(nanosleep|sleep)" "$t/err" || { cat "$t/err"; fail "ranks here: rank 1 is not the suspect"; }
sleep 1
[[ -z $(pgrep -f -- "sleeper-$mark") ]] || fail "ranks left here: $(pgrep -af -- "sleeper-$mark")"
echo PASS
