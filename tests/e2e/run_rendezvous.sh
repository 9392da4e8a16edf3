#!/usr/bin/env bash
# A user program speaks the rendezvous protocol (man ddl, RENDEZVOUS) from
# DDL_RENDEZVOUS and DDL_TOKEN: 4 ranks join and allgather; the token never
# shows in ddl's output, even with -vv.
source "$(dirname "$0")/common.inc"
command -v python3 >/dev/null || skip "python3 is not installed"
client="$DDL_SOURCE_DIR/tests/fixtures/clients/rdzv_client.py"

expect_exit 0 timeout -k 5 60 "$DDL" run -vv --np 4 -- python3 "$client" --token-file "$t/token" allgather
for rank in 0 1 2 3; do
  expect_contains "$t/out" "[$rank] gathered rank-0,rank-1,rank-2,rank-3"
done
token=$(cat "$t/token")
[[ ${#token} == 64 ]] || fail "DDL_TOKEN is not 64 hex digits: ${#token} characters"
expect_not_contains "$t/out" "$token"
expect_not_contains "$t/err" "$token"

# Same with --json: the events never hold the token either.
expect_exit 0 timeout -k 5 60 "$DDL" run --json --np 2 -- python3 "$client" --token-file "$t/token" allgather
expect_not_contains "$t/out" "$(cat "$t/token")"
expect_not_contains "$t/err" "$(cat "$t/token")"
