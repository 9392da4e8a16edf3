#!/usr/bin/env bash
# README.md's tour outputs (the blocks after "<!-- tour -->") are what the
# binary prints today: scripts/readme-tour.sh --check reruns them.
source "$(dirname "$0")/common.inc"
expect_exit 0 timeout 120 "$DDL_SOURCE_DIR/scripts/readme-tour.sh" --check "$DDL"
# The check bites: a block with a wrong output line is reported.
mkdir -p "$t/repo/scripts" "$t/repo/build"
cp "$DDL_SOURCE_DIR/scripts/readme-tour.sh" "$t/repo/scripts/"
cp -r "$DDL_SOURCE_DIR/examples" "$t/repo/"
printf '<!-- tour -->\n```console\n$ echo hello\nhullo\n```\n' >"$t/repo/README.md"
expect_exit 1 "$t/repo/scripts/readme-tour.sh" --check "$DDL"
expect_contains "$t/err" "README.md tour blocks out of date (run scripts/readme-tour.sh): \$ echo hello"
expect_exit 0 "$t/repo/scripts/readme-tour.sh" "$DDL"
[[ $(cat "$t/repo/README.md") == $'<!-- tour -->\n```console\n$ echo hello\nhello\n```' ]] ||
  { cat "$t/repo/README.md"; fail "the block was not rewritten"; }
