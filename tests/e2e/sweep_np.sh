#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ranks of each trial: --np, else sweep.np, else the job file's [launch]
# np, else 1. [launch] np was once dropped without a word (every trial ran 1
# rank); a range, or both keys with different values, is refused (exit 2).
source "$(dirname "$0")/common.inc"
job=$t/job.toml
write_job() {
  cat >"$job" <<TOML
[job]
command = 'echo "trial {i} rank \$DDL_RANK of \$DDL_WORLD_SIZE"'
$1
[sweep]
method = "list"
$2
[sweep.parameters]
i = [1, 2]
TOML
}

# [launch] np = 2 alone: two ranks per trial.
write_job $'[launch]\nnp = 2' ""
expect_exit 0 "$DDL" sweep "$job" -H localhost:4 --dir "$t/a"
expect_contains "$t/err" "2 ranks each"
for i in 1 2; do
  for r in 0 1; do expect_contains "$t/a/trial-000$((i - 1))/output.log" "[$r] trial $i rank $r of 2"; done
done

# sweep.np wins where both say the same; --np over both.
write_job $'[launch]\nnp = 2' "np = 2"
expect_exit 0 "$DDL" sweep "$job" -H localhost:4 --dry-run
expect_contains "$t/out" "2 ranks each"
expect_exit 0 "$DDL" sweep "$job" -H localhost:4 --np 3 --dry-run
expect_contains "$t/out" "3 ranks each"

# Different values, or a range: refused, naming the file and both keys.
write_job $'[launch]\nnp = 2' "np = 1"
expect_exit 2 "$DDL" sweep "$job" -H localhost:4 --dry-run
expect_contains "$t/err" "$job: sweep.np = 1 and [launch] np = 2: a trial's ranks are sweep.np; keep one of the two"
write_job $'[launch]\nnp = 2\nmin_np = 1' ""
expect_exit 2 "$DDL" sweep "$job" -H localhost:4 --dry-run
expect_contains "$t/err" "$job: [launch] np or min_np: ddl sweep takes the ranks of each trial, N (sweep.np), not a range"

# Neither: one rank per trial, as before.
write_job "" ""
expect_exit 0 "$DDL" sweep "$job" -H localhost:4 --dry-run
expect_contains "$t/out" "1 ranks each"
echo PASS
