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

# A wildcard address listens on every interface, but ranks are told a real
# one: they dial 127.0.0.1, never 0.0.0.0 (which would be each rank's own machine).
printf '[rendezvous]\naddress = "0.0.0.0"\n' >"$t/wildcard.toml"
expect_exit 0 timeout -k 5 60 "$DDL" run "$t/wildcard.toml" --np 2 -- \
  sh -c 'echo "dial $DDL_RENDEZVOUS"; exec python3 "$0" allgather' "$client"
expect_contains "$t/out" "[0] dial 127.0.0.1:"
expect_contains "$t/out" "[1] gathered rank-0,rank-1"
