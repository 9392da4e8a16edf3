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
# A line longer than 64 KiB arrives in 64 KiB pieces, each but the last
# tagged "[R+] " (the line goes on); joined, they are the line, byte for byte.
pieces=$((size / 65536))
for r in 0 1 2; do
  letter=$(printf "\\$(printf %o $((97 + r)))")
  for f in out err; do
    got=$(grep -c "^\[$r+\] $letter*$" "$t/$f" || true)
    [[ $got == $((pieces - 1)) ]] || fail "rank $r: $got partial $f pieces, want $((pieces - 1))"
    bytes=$(grep -E "^\[$r\+?\] $letter+$" "$t/$f" | sed -E 's/^\[[0-9]+\+?\] //' | tr -d '\n' | wc -c)
    want=$size; [[ $f == out ]] && want=$((size + 1000))
    [[ $bytes == "$want" ]] || fail "rank $r $f: $bytes bytes of its letter, want $want"
  done
  [[ $(grep -c "^\[$r\] r$r-[0-9]*$" "$t/out") == 2000 ]] || fail "rank $r short lines"
done
# Nothing but whole tagged lines.
[[ $(grep -cvE '^\[[0-2]\+?\] ' "$t/out") == 0 ]] || fail "untagged stdout lines"
[[ $(wc -l <"$t/out") == $((3 * (2002 + pieces - 1))) ]] || fail "stdout line count"
