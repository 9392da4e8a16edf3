#!/usr/bin/env bash
# `ddl bench allreduce` keeps the exit-4 rule of `ddl run`: once a worker has
# joined the rendezvous, all must join within [rendezvous] timeout; else the
# gang is stopped, the missing ranks are named, ddl exits 4, and nothing is
# left running. Rank 1's "ddl" ([ssh] remote_ddl) never starts the worker.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2
tag="ddl-bench-hold-$$"

cat >"$t/ddl-or-hold" <<SH
#!/bin/sh
if [ "\$DDL_RANK" = 1 ]; then exec sh -c 'sleep 300' $tag; fi
exec "$DDL" "\$@"
SH
chmod +x "$t/ddl-or-hold"
job=$t/bench.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<TOML
remote_ddl = "$t/ddl-or-hold"
[job]
grace = "1s"
[rendezvous]
timeout = "1s"
TOML

start=$SECONDS
expect_exit 4 ddl_ssh bench allreduce "$job" -H "$(netns_hostspec 1)" --backend ssh -b 8 -e 8 -n 1 -w 0
expect_contains "$t/err" "rendezvous timed out after 1s: rank 1 never joined"
(( SECONDS - start <= 30 )) || fail "took $((SECONDS - start))s to give up"
tries=0
until [[ $(netns_count_all "$tag") == 0 && $(netns_count_all "ddl worker allreduce") == 0 ]]; do
  ((++tries < 100)) || fail "ranks left running after exit 4"
  sleep 0.1
done
