#!/usr/bin/env bash
# Hostile inputs end in exit 2 with a clear message, within seconds and in
# bounded memory: deeply nested job files (once a parser stack overflow),
# slot and rank counts far above the limit (once gigabytes of RSS), and
# hostfiles that never end or never arrive (/dev/zero, a FIFO nobody writes),
# a million bad hostfile lines, and a discovery script that never stops.
source "$(dirname "$0")/common.inc"
[[ -x /usr/bin/time ]] || skip "/usr/bin/time is not installed"

# bounded WANT_TEXT CMD...: exit 2, WANT_TEXT on stderr, under 10 s and 100 MB.
bounded() {
  local want=$1; shift
  expect_exit 2 /usr/bin/time -o "$t/usage" -f "%e %M" timeout -k 2 10 "$@"
  expect_contains "$t/err" "$want"
  read -r seconds kbytes < <(tail -n 1 "$t/usage")
  awk -v s="$seconds" 'BEGIN { exit !(s < 10) }' || fail "took ${seconds}s: $*"
  ((kbytes < 100 * 1024)) || fail "peak RSS ${kbytes} kB: $*"
}

python3 -c "print('a' + '.a' * 50000 + ' = 1')" >"$t/dotted.toml"
bounded "dotted.toml:1:130: nested more than 64 levels deep" "$DDL" render "$t/dotted.toml" --format plan
python3 -c "print('[' + '.'.join(['x'] * 50000) + ']')" >"$t/header.toml"
bounded "header.toml:1:" "$DDL" run --dry-run "$t/header.toml" -- true
python3 -c "print('x = ' + '[' * 50000)" >"$t/arrays.toml"
bounded "nested more than 64 levels deep" "$DDL" hosts "$t/arrays.toml"

bounded "slot count '100000000' in 'a:100000000' is above ddl's limit of 1000000" \
  "$DDL" render -H a:100000000 --format plan
bounded "--np: 5000000 is above ddl's limit of 1000000 ranks" "$DDL" run --dry-run -H a:8 --np 5000000 -- true
bounded "1500000 ranks is above ddl's limit of 1000000" "$DDL" render -H 'n[1-3]:500000' --format plan

bounded "hostfile /dev/zero is larger than 16 MiB" "$DDL" render --hostfile /dev/zero --format plan
mkfifo "$t/fifo"
bounded "$t/fifo: no hosts in the hostfile" "$DDL" render --hostfile "$t/fifo" --format plan
head -c $((17 << 20)) /dev/zero | tr '\0' '\n' >"$t/huge"
bounded "hostfile $t/huge is larger than 16 MiB" "$DDL" render --hostfile "$t/huge" --format plan

# A hostfile of a million bad or repeated lines: the first 20 problems and a count.
python3 -c "import sys; sys.stdout.write('b\\n' * 500000 + 'a:0\\n' * 500000)" >"$t/bad-hosts"
bounded "$t/bad-hosts: 999979 more problems not shown" "$DDL" render --hostfile "$t/bad-hosts" --format plan
(($(wc -l <"$t/err") == 21)) || fail "expected 20 problems and a count, got $(wc -l <"$t/err") lines"
expect_contains "$t/err" "$t/bad-hosts:2: host 'b' is listed twice (first on line 1)"

# A discovery script that never stops printing is stopped at the cap, not parsed.
printf '#!/bin/sh\nexec yes node1\n' >"$t/endless.sh"
chmod +x "$t/endless.sh"
printf '[hosts]\ndiscovery_script = "%s"\n' "$t/endless.sh" >"$t/endless.toml"
bounded "discovery script $t/endless.sh printed more than 4194304 bytes; it was killed" \
  "$DDL" render "$t/endless.toml" --format plan
pgrep -f "$t/endless.sh" >/dev/null && fail "the discovery script was left running"
echo ok
