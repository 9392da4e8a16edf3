#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host-list logins on real sshd (network-namespace hosts; needs root): a
# per-host "user@host:port:slots" reaches a second sshd on port 2222 as that
# user, winning over [ssh] user; and with the mpirun backend an unreachable
# host is reported as such, not as a rank's exit code.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 1
addr=${NETNS_ADDRS[0]}
netns_second_sshd 0 2222
{ cat "$NETNS_DIR/ssh.toml"; echo 'user = "nobody"'; } >"$t/job.toml"

# The login of the host list wins over [ssh] user; the port is the one connected to.
expect_exit 0 ddl_ssh run "$t/job.toml" -H "root@$addr:2222:2" --backend ssh -- \
  sh -c 'echo "user=$(id -un) port=${SSH_CONNECTION##* } rank=$DDL_RANK"'
expect_contains "$t/out" "[0] user=root port=2222 rank=0"
expect_contains "$t/out" "[1] user=root port=2222 rank=1"
expect_exit 0 ddl_ssh hosts "$t/job.toml" -H "root@$addr:2222:2" --check
grep -qE "^$addr +root@$addr:2222 +yes " "$t/out" || { cat "$t/out"; fail "hosts --check row"; }
# Without the login in the list, [ssh] user is used: nobody, who has no shell
# there, so the launch fails (exit 3) where root's above ran.
expect_exit 3 ddl_ssh run "$t/job.toml" -H "$addr:2222:1" --backend ssh -- true
expect_contains "$t/err" "nobody"

# mpirun: a host that does not answer is named, with why; exit 3.
if have mpirun openmpi-bin; then
  expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" --backend mpirun -H "$addr:1,$NETNS_NET.77:1" -- true
  expect_contains "$t/err" "ddl: error: rank 1 on $NETNS_NET.77 could not run: host $NETNS_NET.77 could not be reached to start Open MPI's daemon there: cannot connect"
  expect_not_contains "$t/err" "exited with code"
fi
echo PASS
