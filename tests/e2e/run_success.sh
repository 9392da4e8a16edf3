#!/usr/bin/env bash
# ddl run on the local backend: 4 ranks succeed, each line tagged once;
# --dry-run launches nothing; a missing command is a usage error.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

expect_exit 0 timeout -k 5 20 "$DDL" run --np 4 -- sh -c 'echo "hello $DDL_RANK of $DDL_WORLD_SIZE"; echo "warn $DDL_RANK" >&2'
for r in 0 1 2 3; do
  [[ $(grep -cx "\[$r\] hello $r of 4" "$t/out") == 1 ]] || { cat "$t/out"; fail "rank $r stdout line"; }
  [[ $(grep -cx "\[$r\] warn $r" "$t/err") == 1 ]] || { cat "$t/err"; fail "rank $r stderr line"; }
done
[[ $(wc -l <"$t/out") == 4 ]] || fail "extra stdout lines"

expect_exit 0 timeout -k 5 20 "$DDL" run --np 2 --dry-run -- touch "$t/launched"
[[ ! -e $t/launched ]] || fail "--dry-run launched the command"
expect_contains "$t/out" "localhost"

expect_exit 2 timeout -k 5 20 "$DDL" run --np 2
[[ -s $t/err ]] || fail "no message for a missing command"

expect_exit 3 timeout -k 5 20 "$DDL" run --np 2 -- "no-such-program-$marker"
expect_contains "$t/err" "command not found: no-such-program-$marker"

# A rank inherits only fds 0-2 (stdin is /dev/null) and the launcher's
# original soft open-file limit. (ls itself opens fd 3 to read the directory.)
soft=$(ulimit -Sn)
expect_exit 0 timeout -k 5 20 "$DDL" run --np 2 -- ls /proc/self/fd
for r in 0 1; do
  [[ $(grep "^\[$r\] " "$t/out" | cut -d' ' -f2 | sort -n | tr '\n' ' ') == "0 1 2 3 " ]] ||
    { cat "$t/out"; fail "rank $r has more fds than 0-2"; }
done
expect_exit 0 timeout -k 5 20 "$DDL" run --np 1 -- sh -c 'echo "stdin $(readlink /proc/$$/fd/0)"; echo "nofile $(ulimit -Sn)"'
expect_contains "$t/out" "[0] stdin /dev/null"
expect_contains "$t/out" "[0] nofile $soft"
