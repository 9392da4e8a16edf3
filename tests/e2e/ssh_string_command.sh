#!/usr/bin/env bash
# A job-file string command (`command = "..."`, run by /bin/sh -c) over ssh:
# the preflight checks what really runs (/bin/sh), not the string's first
# word, so the job runs; a missing program inside the string fails in the
# rank (127), not as a launch error.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2

job=$t/string.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<'TOML'
[job]
command = "echo \"rank=$DDL_RANK host=$(hostname)\" && test -n \"$DDL_TOKEN\""
TOML
expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 1)" --backend ssh
expect_contains "$t/out" "[0] rank=0 host=h1"
expect_contains "$t/out" "[1] rank=1 host=h2"

cp "$NETNS_DIR/ssh.toml" "$t/missing.toml"
printf '[job]\ncommand = "no-such-program-ddl --flag"\n' >>"$t/missing.toml"
expect_exit 127 ddl_ssh run "$t/missing.toml" -H "$(netns_hostspec 1)" --backend ssh
expect_not_contains "$t/err" "cannot start on"
