#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A restart's backoff longer than the relay's silence limit (15 s) keeps the
# host's relay: ddl beats it while no rank runs, so the restart's ranks start
# through it, with no new connection and no new login shell (issue 40, item
# 3). Before, the relay ended during the backoff, ddl connected again (the
# host's one reconnect) and the restart ran a login shell per rank.
# Counted on the host itself (NETNS_COUNT_SHELLS).
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
NETNS_COUNT_SHELLS=1 netns_up 1

job=$t/restart.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<'TOML'
[job]
max_restarts = 1
command = 'echo "attempt=$DDL_ATTEMPT rank=$DDL_RANK"; [ "$DDL_ATTEMPT" != 0 ]'
[launch]
backoff = "16s"
TOML
DDL_TIMEOUT=90 expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 2)" --backend ssh -v
for r in 0 1; do expect_contains "$t/out" "[$r] attempt=1 rank=$r"; done
expect_not_contains "$t/err" "connecting again"
shells=$(netns_shells 0); conns=$(netns_handshakes 0)
[[ $shells == 1 && $conns == 1 ]] ||
  fail "a restart after a 16 s backoff: the host saw $shells login shells over $conns connections, want 1 over 1"
netns_relays_gone
echo PASS
