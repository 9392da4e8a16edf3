#!/usr/bin/env bash
# The command line: --version, --help, unknown commands.
source "$(dirname "$0")/common.inc"

expect_exit 0 "$DDL" --version
expect_contains "$t/out" "ddl 0."

expect_exit 2 "$DDL" rnu
expect_contains "$t/err" "ddl: error: unknown command 'rnu'; did you mean 'run'?"

expect_exit 0 "$DDL" --help
for c in run hosts bench render init completions; do expect_contains "$t/out" "$c"; done
expect_not_contains "$t/out" "worker"

# A usage error points at the subcommand's own --help.
expect_exit 2 "$DDL" init --template nope
expect_contains "$t/err" "ddl: error: --template: nope not in"
expect_contains "$t/err" "Run 'ddl init --help' for usage."
