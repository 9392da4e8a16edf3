#!/usr/bin/env bash
# Output controls (issue 19): --output-ranks, --prefix and torchrun's
# TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE, --timestamps, --split-logs, --fold
# (dshbak -c), their job-file keys, and the errors when they are misused.
source "$(dirname "$0")/common.inc"

# --output-ranks: the others only in --log-dir.
expect_exit 0 "$DDL" run --np 5 --output-ranks 0,3-4 --log-dir "$t/logs" -- sh -c 'echo "out $DDL_RANK"; echo "err $DDL_RANK" >&2'
for r in 0 3 4; do expect_contains "$t/out" "[$r] out $r"; expect_contains "$t/err" "[$r] err $r"; done
for r in 1 2; do expect_not_contains "$t/out" "[$r]"; expect_not_contains "$t/err" "[$r]"; done
expect_contains "$t/logs/rank-1.attempt-0.log" "out 1"
expect_contains "$t/logs/rank-2.attempt-0.log" "err 2"
expect_exit 2 "$DDL" run --np 2 --output-ranks 0,2 -- true
expect_contains "$t/err" "ddl: error: --output-ranks: rank 2 is not in this job of 2 ranks (0-1)"
expect_exit 2 "$DDL" run --np 2 --output-ranks 0-x -- true
expect_contains "$t/err" "ddl: error: --output-ranks: 'x' is not a rank (a number from 0)"

# --prefix; the job file's prefix; torchrun's template; --prefix wins over it.
expect_exit 0 "$DDL" run --np 2 --prefix '{host}:{rank}/{local_rank}@{attempt}| ' -- sh -c 'echo hi'
expect_contains "$t/out" "localhost:1/1@0| hi"
printf '[job]\ncommand = ["echo", "hi"]\nprefix = "<{rank}> "\n' >"$t/prefix.toml"
expect_exit 0 "$DDL" run --np 2 "$t/prefix.toml"
expect_contains "$t/out" "<1> hi"
expect_exit 0 env 'TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE=[${role_name}${rank}|$local_rank]:' "$DDL" run --np 2 -- echo hi
expect_contains "$t/out" "[default1|1]:hi"
expect_exit 0 env 'TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE=[${rank}]:' "$DDL" run --np 1 --prefix '{rank}> ' -- echo hi
expect_contains "$t/out" "0> hi"
expect_exit 2 "$DDL" run --np 1 --prefix '{rnk} ' -- true
expect_contains "$t/err" "ddl: error: --prefix: unknown field {rnk} (did you mean {rank}?)"
printf '[job]\ncommand = "true"\nprefix = "{rank"\n' >"$t/bad.toml"
expect_exit 2 "$DDL" run "$t/bad.toml"
expect_contains "$t/err" "bad.toml:3:10: job.prefix: a '{' without its '}'"

# --timestamps: an ISO 8601 UTC time before each line shown; logs keep the bytes.
expect_exit 0 "$DDL" run --np 2 --timestamps --log-dir "$t/ts" -- echo stamped
grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z \[1\] stamped$' "$t/out" ||
  fail "no timestamped line: $(cat "$t/out")"
[[ $(cat "$t/ts/rank-1.attempt-0.log") == stamped ]] || fail "the log file got more than the line"

# --split-logs: stdout and stderr in files of their own; needs a log folder.
expect_exit 0 "$DDL" run --np 1 --split-logs --log-dir "$t/split" -- sh -c 'echo to-out; echo to-err >&2'
[[ $(cat "$t/split/rank-0.attempt-0.stdout.log") == to-out ]] || fail "stdout log"
[[ $(cat "$t/split/rank-0.attempt-0.stderr.log") == to-err ]] || fail "stderr log"
[[ ! -e $t/split/rank-0.attempt-0.log ]] || fail "a combined log besides the split ones"
expect_exit 2 "$DDL" run --np 1 --split-logs -- true
expect_contains "$t/err" "ddl: error: --split-logs: needs a log directory (job.log_dir or --log-dir)"

# --fold: identical whole outputs once, like dshbak -c, after the attempt.
expect_exit 0 "$DDL" run --np 4 --fold -- sh -c 'uname -s; [ "$DDL_RANK" = 2 ] && echo odd >&2; true'
cat >"$t/want" <<WANT
----------------
ranks 0-1,3 (localhost)
----------------
$(uname -s)
----------------
rank 2 (localhost)
----------------
$(uname -s)
odd
WANT
diff "$t/want" "$t/out" || fail "--fold output differs"
expect_exit 2 "$DDL" run --np 2 --fold --json -- true
expect_contains "$t/err" "ddl: error: --fold: does not go with --json"
expect_exit 2 "$DDL" run --np 2 --fold --timestamps -- true
expect_contains "$t/err" "ddl: error: --fold: does not go with timestamps"
printf '[job]\ncommand = "echo same"\nfold = true\noutput_ranks = "1-2"\n' >"$t/fold.toml"
expect_exit 0 "$DDL" run --np 3 "$t/fold.toml"
expect_contains "$t/out" "ranks 1-2 (localhost)"
expect_not_contains "$t/out" "rank 0"
