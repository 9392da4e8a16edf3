#!/usr/bin/env bash
# man/ddl.1 renders with no groff warning and holds every section users look for.
source "$(dirname "$0")/common.inc"
command -v groff >/dev/null || skip "groff is not installed"
page="$DDL_SOURCE_DIR/man/ddl.1"

expect_exit 0 groff -man -ww -z "$page"
[[ ! -s "$t/err" ]] || { cat "$t/err"; fail "groff warned about man/ddl.1"; }

expect_exit 0 groff -man -Tascii -P-cbou "$page"
for section in NAME SYNOPSIS DESCRIPTION "COMMON OPTIONS" COMMANDS "JOB FILE" ENVIRONMENT \
    "EXIT STATUS" "JSON OUTPUT" "SSH HOST KEYS" "GANG SEMANTICS" RENDEZVOUS EXAMPLES; do
  grep -qx "$section" "$t/out" || fail "man page lacks section '$section'"
done
for table in job hosts launch ssh kubernetes rendezvous torch tensorflow; do
  grep -qx "   \[$table\]" "$t/out" || fail "man page lacks the job-file table [$table]"
done
