#!/usr/bin/env bash
# Output under load: several ranks write long lines without a newline on
# stdout and stderr at once, and many short lines; every line arrives once,
# whole, with exact byte counts, never mixed with another.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

size=$((8 * 1024 * 1024))
# Each rank: one long line of its letter on stdout and on stderr (the final
# stdout one has no newline), then 2000 short lines.
script='l=$(printf "\\$(printf %o $((97 + DDL_RANK)))")
head -c '$size' /dev/zero | tr "\0" "$l" >&2 &
{ head -c '$size' /dev/zero | tr "\0" "$l"; echo; seq 1 2000 | sed "s/^/r$DDL_RANK-/"; head -c 1000 /dev/zero | tr "\0" "$l"; }
wait'
expect_exit 0 timeout -k 5 60 "$DDL" run --np 3 -- sh -c "$script"
for r in 0 1 2; do
  letter=$(printf "\\$(printf %o $((97 + r)))")
  for f in out err; do
    want=1; [[ $f == out ]] && want=2
    got=$(grep -c "^\[$r\] $letter*$" "$t/$f" || true)
    [[ $got == "$want" ]] || fail "rank $r: $got long $f lines, want $want"
  done
  len=$(grep "^\[$r\] $letter*$" "$t/err" | wc -c)
  [[ $len == $((size + 5)) ]] || fail "rank $r stderr line has $len bytes"
  lens=$(grep "^\[$r\] $letter*$" "$t/out" | awk '{print length($0)}' | sort -n | tr '\n' ' ')
  [[ $lens == "1004 $((size + 4)) " ]] || fail "rank $r stdout long lines: $lens"
  [[ $(grep -c "^\[$r\] r$r-[0-9]*$" "$t/out") == 2000 ]] || fail "rank $r short lines"
done
# Nothing but whole tagged lines.
[[ $(grep -cv '^\[[0-2]\] ' "$t/out") == 0 ]] || fail "untagged stdout lines"
[[ $(wc -l <"$t/out") == $((3 * 2002)) ]] || fail "stdout line count"
