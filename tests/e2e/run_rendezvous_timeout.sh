#!/usr/bin/env bash
# The exit-4 rule: once a rank has joined, all must join within
# [rendezvous] timeout; else ddl stops the gang, names the missing ranks,
# exits 4, and leaves nothing running. A program that never uses the
# rendezvous is not affected.
source "$(dirname "$0")/common.inc"
command -v python3 >/dev/null || skip "python3 is not installed"
client="$DDL_SOURCE_DIR/tests/fixtures/clients/rdzv_client.py"
tag="ddl-rdzv-timeout-$$"
cleanup() { pkill -KILL -f -- "--tag $tag" 2>/dev/null || true; }
trap 'rc=$?; cleanup; rm -rf "$t"; exit $rc' EXIT

cat >"$t/job.toml" <<TOML
[job]
command = ["python3", "$client", "--skip", "2,3", "--tag", "$tag", "barrier"]
grace = "1s"
[launch]
np = 4
[rendezvous]
timeout = "1s"
TOML
start=$SECONDS
expect_exit 4 timeout -k 5 60 "$DDL" run "$t/job.toml"
expect_contains "$t/err" "rendezvous timed out after 1s: ranks 2, 3 never joined"
(( SECONDS - start <= 15 )) || fail "took $((SECONDS - start))s to give up"
sleep 0.5
if pgrep -f -- "--tag $tag" >/dev/null; then fail "ranks left running after exit 4"; fi

# Nobody joins: the rule never starts, the job runs to its own end.
cat >"$t/quiet.toml" <<TOML
[job]
command = ["sh", "-c", "sleep 1.5"]
[launch]
np = 2
[rendezvous]
timeout = "500ms"
TOML
expect_exit 0 timeout -k 5 60 "$DDL" run "$t/quiet.toml"
