#!/usr/bin/env bash
# Real JAX (issue 39): jax.distributed.initialize() as the man page says, 4
# processes on 2 namespace hosts over ssh: process_count() is 4 and a
# cross-process sum over CPU collectives (gloo) is right on every process.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(framework_python jax)
script=$DDL_SOURCE_DIR/tests/fixtures/clients/jax_sum.py
# Gloo (as in JAX 0.6) dials the address its own host name resolves to: the hosts know theirs.
NETNS_NAMED=1 netns_up 2
cat >"$t/job.toml" <<TOML
[job]
frameworks = ["jax"]
command = ["$python", "$script"]
grace = "2s"
env = { JAX_PLATFORMS = "cpu" }
TOML
cat "$NETNS_DIR/ssh.toml" >>"$t/job.toml"
DDL_TIMEOUT=200 expect_exit 0 ddl_ssh run "$t/job.toml" -H "$(netns_hostspec 2)" --backend ssh
for r in 0 1 2 3; do
  expect_contains "$t/out" "[$r] process $r of 4: sum 10 (want 10)"
done
echo "ok: jax.distributed.initialize(), 4 processes on 2 hosts, a gloo sum right on every process"
