#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One login shell per host per launch (issue 32), counted on the hosts
# themselves: each host's sshd runs every command through a wrapper that
# logs it (NETNS_COUNT_SHELLS). The route, interface and port probe and the
# rank's shim are one exec over one connection per host; where a host runs
# several ranks, that shim execs ddl's relay (`ddl worker ssh-relay`), whose
# channels carry them all: still one shell. A host without this ddl gets a
# shell per rank, over the same connection.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
NETNS_COUNT_SHELLS=1 netns_up 3

# shells_are WANT_SHELLS WANT_CONNECTIONS WHAT: per host, then the log cleared.
shells_are() {
  local i shells conns
  for i in "${!NETNS_HOSTS[@]}"; do
    shells=$(netns_shells "$i"); conns=$(netns_handshakes "$i")
    [[ $shells == "$1" && $conns == "$2" ]] ||
      fail "$3: host h$((i + 1)) saw $shells login shells over $conns connections, want $1 over $2"
  done
  : >"$NETNS_DIR/shells"
}

# A plain run, one rank per host: one login shell per host.
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 1)" --backend ssh -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname)"'
for r in 0 1 2; do expect_contains "$t/out" "[$r] rank=$r host=h$((r + 1))"; done
shells_are 1 1 "one rank per host"

# Two ranks per host: the probes' shim becomes the relay of both ranks.
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 2)" --backend ssh -v -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname)"; echo "err=$DDL_RANK" >&2'
for r in 0 1 2 3 4 5; do
  expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1))"
  expect_contains "$t/err" "[$r] err=$r"
done
shells_are 1 1 "two ranks per host"
expect_contains "$t/err" "ssh: 3 connections to 3 hosts ready, 3 running ddl's relay"
netns_relays_gone

# Exit codes and signals come through the relay as through a channel: the
# gang is ended, the summary names the rank and its code.
expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 2)" --backend ssh -- \
  sh -c '[ "$DDL_RANK" = 3 ] && exit 3; exec sleep 30'
expect_contains "$t/err" "rank 3 on ${NETNS_ADDRS[1]} exited with code 3"
shells_are 1 1 "a failing rank, two ranks per host"
netns_relays_gone
expect_exit 137 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 2)" --backend ssh -- \
  sh -c '[ "$DDL_RANK" = 4 ] && kill -KILL $$; exec sleep 30'
expect_contains "$t/err" "rank 4 on ${NETNS_ADDRS[2]} was killed by SIGKILL"
: >"$NETNS_DIR/shells"
netns_relays_gone

# A relay that dies mid-run (killed here) is a lost host: exit 3 naming it
# and how the relay ended; the ranks it ran end with their input.
marks=$t/marks; mkdir -p "$marks"
ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 2)" --backend ssh -- \
  sh -c "touch $marks/\$DDL_RANK; exec sleep 37" >"$t/out" 2>"$t/err" &
job_pid=$!
wait_files 6 "$marks/*"
relay=$(netns_relays | sed -n 1p)
[[ -n $relay ]] || fail "no relay runs the job's ranks"
kill -KILL "$relay"
got=0; wait "$job_pid" || got=$?
[[ $got == 3 ]] || fail "a killed relay: exit $got, want 3: $(cat "$t/err")"
expect_contains "$t/err" "ddl's relay there ended (SIGKILL)"
for i in $(seq 50); do (($(netns_count_all "sleep 37") == 0)) && break; sleep 0.1; done
(($(netns_count_all "sleep 37") == 0)) || fail "ranks left running after their relay was killed"
netns_relays_gone
: >"$NETNS_DIR/shells"

# A host whose [ssh] remote_ddl is another ddl: a shell per rank, as correct.
printf '#!/bin/sh\necho "ddl 0.0.0-other"\n' >"$t/other-ddl"
chmod +x "$t/other-ddl"
cp "$NETNS_DIR/ssh.toml" "$t/other.toml"
sed -i "s|^\[ssh\]|[ssh]\nremote_ddl = \"$t/other-ddl\"|" "$t/other.toml"
grep -q "remote_ddl" "$t/other.toml" || fail "no [ssh] section in $NETNS_DIR/ssh.toml"
expect_exit 0 ddl_ssh run "$t/other.toml" -H "$(netns_hostspec 2)" --backend ssh -v -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname)"'
for r in 0 1 2 3 4 5; do expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1))"; done
shells_are 2 1 "another ddl on the hosts, two ranks per host"
expect_contains "$t/err" "no ddl $("$DDL" --version | cut -d' ' -f2) at $t/other-ddl: a login shell per rank"

# --bind core: the CPU topology probe is one more request to the same shim.
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 2)" --backend ssh --bind core -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname)"'
for r in 0 1 2 3 4 5; do expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1))"; done
expect_not_contains "$t/err" "cannot read the CPU topology"
shells_are 1 1 "--bind core, two ranks per host"

# Every interface variable set: no route probe; the master port's probe of
# rank 0's host is a request to the shim of its first rank.
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 1)" --backend ssh \
  -x GLOO_SOCKET_IFNAME=eth0 -x NCCL_SOCKET_IFNAME=eth0 -x HOROVOD_GLOO_IFACE=eth0 -- \
  sh -c 'echo "rank=$DDL_RANK port=$MASTER_PORT"'
expect_contains "$t/out" "[0] rank=0 port="
shells_are 1 1 "interfaces given, one rank per host"

# slots = "gpus" (a test double of nvidia-smi with 2 GPUs on every host):
# the GPU probe is one more request to the same shim.
fake_nvidia_smi "$NETNS_DIR/bin" 2
cp "$NETNS_DIR/ssh.toml" "$t/gpus.toml"
cat >>"$t/gpus.toml" <<TOML
[hosts]
list = ["${NETNS_ADDRS[0]}", "${NETNS_ADDRS[1]}", "${NETNS_ADDRS[2]}"]
slots = "gpus"
TOML
expect_exit 0 ddl_ssh run "$t/gpus.toml" --backend ssh -- sh -c 'echo "rank=$DDL_RANK gpus=$CUDA_VISIBLE_DEVICES"'
for r in 0 1 2 3 4 5; do expect_contains "$t/out" "[$r] rank=$r gpus=$((r % 2))"; done
shells_are 1 1 "slots = gpus, two ranks per host"

# A restart: the connections are kept; a job that may restart runs even one
# rank per host through ddl's relay, so the restart starts no login shell.
job=$t/restart.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<'TOML'
[job]
max_restarts = 1
command = 'echo "attempt=$DDL_ATTEMPT rank=$DDL_RANK"; [ "$DDL_ATTEMPT" != 0 ]'
TOML
expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 1)" --backend ssh
for r in 0 1 2; do expect_contains "$t/out" "[$r] attempt=1 rank=$r"; done
shells_are 1 1 "one restart"
# Two ranks per host: the restart's ranks start through the same relay, no
# new login shell.
expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 2)" --backend ssh
for r in 0 1 2 3 4 5; do expect_contains "$t/out" "[$r] attempt=1 rank=$r"; done
shells_are 1 1 "one restart, two ranks per host"
netns_relays_gone

# Elastic (--np 2:3): a failure re-plans on the hosts left; the connections
# of the hosts still in the job are kept with their relay, so the re-plan's
# probes and ranks are the relay's commands: one shell per host in all
# (before the relay was kept, one per host per attempt).
expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 1)" --backend ssh --np 2:3
for r in 0 1 2; do expect_contains "$t/out" "[$r] attempt=1 rank=$r"; done
shells_are 1 1 "an elastic re-plan"

# The preflight's check, then the job: the check's connections and relays
# are kept for the job, whose probes and ranks start no login shell and no
# handshake of their own (before: two shells and two connections per host).
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 1)" --backend ssh --preflight -v -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname)"'
for r in 0 1 2; do expect_contains "$t/out" "[$r] rank=$r host=h$((r + 1))"; done
expect_contains "$t/err" "preflight: 3 hosts, 3 pairs"
shells_are 1 1 "the preflight's check, then the job"
netns_relays_gone
echo PASS
