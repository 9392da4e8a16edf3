#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A rank's failure over ssh is said once, as that rank's (issue 40, item
# 10): 4 network-namespace hosts (real sshd each), one rank each, rank 2
# exits 1. ddl stops the other ranks itself; with --mpi pmix their hosts'
# workers got that SIGTERM and each printed "ddl: error: interrupted by
# SIGTERM while running the ranks" after the failure, three stray lines
# blaming ddl's own stop. stderr is exactly the rank's line, the worker's
# verdict on rank 2 (pmix) and ddl's report; exit 1; nothing left.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
pkg-config --exists pmix || skip "OpenPMIx (libpmix-dev) is not installed"
mark="sfl$$x$RANDOM"
netns_up 4
chmod 755 "$t"
cat >"$t/fail-$mark" <<'SH'
#!/bin/sh
if [ "$DDL_RANK" = 2 ]; then sleep 1; echo "rank 2 fails" >&2; exit 1; fi
exec sleep 60
SH
chmod 755 "$t/fail-$mark"

for mode in plain pmix; do
  extra=(); [[ $mode == pmix ]] && extra=(--mpi pmix)
  rc=0
  ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 1)" --backend ssh "${extra[@]}" "$t/fail-$mark" \
    >"$t/out" 2>"$t/err" || rc=$?
  [[ $rc == 1 ]] || { cat "$t/err"; fail "$mode: exit $rc, want 1"; }
  sed -E 's/ after [0-9.]+s$/ after Ns/' "$t/err" >"$t/said"
  {
    echo "[2] rank 2 fails"
    [[ $mode == pmix ]] && echo "ddl: error: rank 2 exited with code 1"
    echo "ddl: error: rank 2 on ${NETNS_ADDRS[2]} exited with code 1 after Ns"
    echo "ddl: last 1 stderr line of rank 2:"
    echo "  [2] rank 2 fails"
  } >"$t/want"
  diff "$t/want" "$t/said" || fail "$mode: stderr differs (want, got)"
  sleep 1
  [[ $(netns_count_all "$mark") == 0 ]] || fail "$mode: a rank is left on a host"
done
echo PASS
