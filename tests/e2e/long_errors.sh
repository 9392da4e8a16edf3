#!/usr/bin/env bash
# An error about a very long piece of input ends as any other error: the
# right exit code, with and without --json, the quoted input cut to a few
# hundred bytes with "…" and its length, quickly and in bounded memory. Once
# `--json` turned such an error into SIGSEGV (a backtracking regex recursed
# once per character of the message). (issue 27, item 1)
source "$(dirname "$0")/common.inc"
[[ -x /usr/bin/time ]] || skip "/usr/bin/time is not installed (scripts/deps.sh installs it)"

# bounded CODE CMD...: exit CODE within 10 s and 100 MB.
bounded() {
  local want=$1; shift
  expect_exit "$want" /usr/bin/time -o "$t/usage" -f "%e %M" timeout -k 2 10 "$@"
  read -r seconds kbytes < <(tail -n 1 "$t/usage")
  awk -v s="$seconds" 'BEGIN { exit !(s < 10) }' || fail "took ${seconds}s: $*"
  ((kbytes < 100 * 1024)) || fail "peak RSS ${kbytes} kB: $*"
  echo "${*:1:3}: exit $want in ${seconds}s, peak RSS ${kbytes} kB" | cut -c1-120 >&2
}

# No line ddl prints about it is longer than 1000 bytes, and the error cuts the input.
short_lines() {
  local file=$1 longest
  longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "$file")
  ((longest < 1000)) || fail "$file has a line of $longest bytes"
}

long=$(python3 -c "print('b;' + 'a' * 100000)")
for json in "" --json; do
  bounded 2 "$DDL" hosts $json -H "$long"
  short_lines "$t/err"
  expect_contains "$t/err" "…' (100002 bytes)"
done
python3 -c "import json, sys; e = json.loads(sys.stdin.read()); assert e['event'] == 'error' and e['exit_code'] == 2, e; \
assert '…' in e['message'] and len(e['message']) < 1000, len(e['message'])" <"$t/out"

# The same host in a job file, under run --json: the error names file:line:col.
printf '[hosts]\nlist = ["%s"]\n' "$long" >"$t/job.toml"
for json in "" --json; do
  bounded 2 "$DDL" run $json "$t/job.toml" -- true
  short_lines "$t/err"
done
python3 - "$t/out" "$t/job.toml" <<'PY'
import json, sys
event = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert event["event"] == "error" and event["exit_code"] == 2, event
first = event["errors"][0]
assert first["file"] == sys.argv[2] and first["line"] == 2 and first["column"] > 0, first
assert "…" in first["message"] and "(100002 bytes)" in first["message"], first["message"][:300]
PY

# A message that looks like FILE:LINE:COL: at its very end and a megabyte of
# colons and digits before it: parsed in linear time.
python3 -c "print('[hosts]\nlist = [\"' + ':1' * 300000 + ':2: x\"]')" >"$t/colons.toml"
bounded 2 "$DDL" render --json "$t/colons.toml" --format plan
short_lines "$t/err"

# A discovery script that fails after one 300 KB line on stderr.
cat >"$t/discover.sh" <<'SH'
#!/bin/sh
head -c 300000 /dev/zero | tr '\0' x >&2
echo >&2
exit 1
SH
chmod +x "$t/discover.sh"
printf '[hosts]\ndiscovery_script = "%s"\n' "$t/discover.sh" >"$t/discover.toml"
for json in "" --json; do
  bounded 3 "$DDL" run $json "$t/discover.toml" -- true
  short_lines "$t/err"
  expect_contains "$t/err" "… (300000 bytes)"
done
echo ok
