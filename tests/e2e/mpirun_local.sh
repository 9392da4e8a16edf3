#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# backend = "mpirun" on this machine: a real Open MPI allreduce through ddl,
# the env of every rank, exit codes, dry-run, no secret on any command line,
# and no rank left after kill -9 of ddl.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
command -v mpicc >/dev/null || skip "mpicc (libopenmpi-dev) is not installed"
command -v mpirun >/dev/null || skip "mpirun (openmpi-bin) is not installed"
mpicc -O1 -o "$t/allreduce" "$DDL_SOURCE_DIR/tests/fixtures/mpi/allreduce.c"
run() { timeout -k 5 60 "$DDL" run -H localhost:3 --backend mpirun "$@"; }

expect_exit 0 run -- "$t/allreduce"
for r in 0 1 2; do expect_contains "$t/out" "[$r] rank $r/3 on "; done
expect_contains "$t/out" "sum 6 wrong 0 DDL_RANK=2"
expect_not_contains "$t/out" "wrong 1"

# The same env as other backends, byte for byte; the token never in argv.
odd=$'a \'b\' "$c" \\ d\nnext'
cat >"$t/rank.sh" <<'SH'
printf '%s|%s|%s|%s|%s\n' "$DDL_RANK" "$OMPI_COMM_WORLD_RANK" "$DDL_LOCAL_RANK" "$RANK" "$ODD" | tr '\n' '~'; echo
if [ "$DDL_RANK" = 0 ]; then
  for f in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -- "$DDL_TOKEN" && echo "TOKEN IN ARGV: $f"
  done
fi
exit 0
SH
expect_exit 0 run -x "ODD=$odd" -- sh "$t/rank.sh"
for r in 0 1 2; do expect_contains "$t/out" "[$r] $r|$r|$r|$r|a 'b' \"\$c\" \\ d~next~"; done
expect_not_contains "$t/out" "TOKEN IN ARGV"

# The first failing rank and its code; a signal as 128+N.
expect_exit 5 run -- sh -c 'if [ "$DDL_RANK" = 2 ]; then echo "two fails" >&2; exit 5; fi; sleep 30'
expect_contains "$t/err" "rank 2 on localhost exited with code 5"
expect_contains "$t/err" "two fails"
expect_not_contains "$t/err" "ddl-mpi: rank"
expect_exit 137 run -- sh -c 'if [ "$DDL_RANK" = 1 ]; then kill -9 $$; fi; sleep 30'

# --dry-run shows the mpirun command line, launches nothing.
expect_exit 0 run --dry-run -- "$t/allreduce"
expect_contains "$t/out" "mpirun command"
expect_contains "$t/out" "--hostfile"
expect_contains "$t/out" "plm_rsh_agent"
expect_contains "$t/out" "DDL_MPI_ENV_2"
# mpirun's backend does not look for interfaces: no word about DNS for an
# address or a name that needs none (issue 41).
expect_not_contains "$t/err" "up in DNS"
expect_not_contains "$t/out" "up in DNS"
expect_exit 0 timeout -k 5 60 "$DDL" run -H 127.0.0.1:2 --backend mpirun --dry-run -- "$t/allreduce"
expect_not_contains "$t/err" "up in DNS"
expect_not_contains "$t/out" "up in DNS"

# kill -9 of ddl: mpirun gets SIGTERM and ends every rank.
marker="ddlmpi$$x$RANDOM"
ln -s "$(command -v sleep)" "$t/$marker"
"$DDL" run -H localhost:3 --backend mpirun -- "$t/$marker" 60 >"$t/out" 2>"$t/err" &
ddl_pid=$!
for _ in $(seq 150); do
  [[ $(pgrep -fc -- "^$t/$marker" || true) == 3 ]] && break
  sleep 0.1
done
[[ $(pgrep -fc -- "^$t/$marker" || true) == 3 ]] || fail "3 ranks did not start: $(cat "$t/err")"
kill -9 "$ddl_pid"
wait "$ddl_pid" 2>/dev/null || true
for _ in $(seq 100); do
  [[ $(pgrep -fc -- "^$t/$marker" || true) == 0 ]] && break
  sleep 0.1
done
left=$(pgrep -fc -- "^$t/$marker" || true)
[[ $left == 0 ]] || fail "$left ranks left after kill -9 of ddl"
echo PASS
