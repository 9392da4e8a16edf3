#!/usr/bin/env bash
# [watchdog] progress is matched by a linear-time engine (RE2): a pattern that
# makes a backtracking engine run for ever on one rank line ("(a|aa)*c", and
# "(\w+\s?)*$" as a user would write it) neither delays the lines after it nor
# keeps ddl from ending on Ctrl-C; what RE2 cannot compile (a back reference,
# a look-ahead) is refused at load with file:line:col. (issue 27, item 2)
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps.sh installs it)"

cat >"$t/rank.sh" <<SH
#!/bin/sh
head -c 1000 /dev/zero | tr '\\0' a; echo
head -c 1000 /dev/zero | tr '\\0' a; echo ' !'
echo "after the long lines"
exec "$nap" 60
SH
chmod +x "$t/rank.sh"

# seen_within FILE TEXT SECONDS: true once TEXT is in FILE.
seen_within() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

for pattern in '(a|aa)*c' '(\\w+\\s?)*$'; do
  printf '[job]\ncommand = ["%s"]\ngrace = "1s"\n[watchdog]\nstall = "30s"\nprogress = "%s"\n' \
    "$t/rank.sh" "$pattern" >"$t/job.toml"
  rm -f "$t/out" "$t/err"
  start=$(date +%s.%N)
  "$DDL" run "$t/job.toml" --np 2 >"$t/out" 2>"$t/err" &
  ddl=$!
  if ! seen_within "$t/out" "[1] after the long lines" 5; then
    kill -KILL $ddl 2>/dev/null || true
    cat "$t/out" "$t/err" | cut -c1-200
    fail "progress = '$pattern': the lines after a long line did not appear within 5 s"
  fi
  shown=$(date +%s.%N)
  kill -INT $ddl; sleep 0.2; kill -INT $ddl 2>/dev/null || true  # a second Ctrl-C, if it still runs
  got=0
  for ((i = 0; i < 100; i++)); do kill -0 $ddl 2>/dev/null || break; sleep 0.05; done
  if kill -0 $ddl 2>/dev/null; then
    kill -KILL $ddl
    fail "progress = '$pattern': ddl still ran 5 s after two SIGINTs"
  fi
  wait $ddl || got=$?
  ended=$(date +%s.%N)
  [[ $got == 130 ]] || { cat "$t/err"; fail "progress = '$pattern': exit $got after two SIGINTs, want 130"; }
  expect_none_left 2
  awk -v a="$start" -v b="$shown" -v c="$ended" -v p="$pattern" \
    'BEGIN { printf "progress = %s: lines shown %.2fs after start, ended %.2fs after the SIGINTs\n", p, b - a, c - b }' >&2
done

# What RE2 cannot compile: exit 2, file:line:col, RE2's reason.
for pattern in '(a)\\1' '(?=step)'; do
  printf '[job]\ncommand = "true"\n[watchdog]\nstall = "5s"\nprogress = "%s"\n' "$pattern" >"$t/bad.toml"
  expect_exit 2 "$DDL" run "$t/bad.toml" --dry-run
  expect_contains "$t/err" "$t/bad.toml:5:12: watchdog.progress: not a valid RE2 regular expression: "
done
echo ok
