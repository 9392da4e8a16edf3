#!/usr/bin/env bash
# torch's own conventions under ddl run, with real torch: the async NCCL
# error handling variables (unless the user sets them) and a per-rank
# TORCHELASTIC_ERROR_FILE; when a rank decorated with @record raises, the
# failure summary and the --json summary event show its message and
# traceback. The private folder of the error files is removed afterwards.
source "$(dirname "$0")/common.inc"
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "from torch.distributed.elastic.multiprocessing.errors import record" 2>/dev/null; then
    python=$(command -v "$candidate"); break
  fi
done
[[ -n $python ]] || skip "torch (with torch.distributed.elastic) is not importable"
program="$DDL_SOURCE_DIR/tests/fixtures/clients/torch_record_error.py"
mkdir "$t/tmp"
export TMPDIR="$t/tmp"

expect_exit 1 timeout -k 5 90 "$DDL" run --np 2 -- "$python" "$program"
expect_contains "$t/out" "[0] TORCH_NCCL_ASYNC_ERROR_HANDLING=1"
expect_contains "$t/out" "[1] NCCL_ASYNC_ERROR_HANDLING=1"
expect_contains "$t/out" "/rank-1.attempt-0.error.json"
expect_contains "$t/err" "ddl: error: rank 1 on localhost exited with code 1"
expect_contains "$t/err" "ddl: rank 1 raised (its torch error file): ValueError: rank 1 says boom"
expect_contains "$t/err" "ddl: traceback of rank 1:"
expect_contains "$t/err" "in deep_cause"
# Cleaned up: nothing left in TMPDIR.
[[ -z $(ls -A "$t/tmp") ]] || fail "left in TMPDIR: $(ls -A "$t/tmp")"

# --json: the summary event carries it.
expect_exit 1 timeout -k 5 90 "$DDL" run --np 2 --json -- "$python" "$program"
python3 - "$t/out" <<'PY'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
summary = [e for e in events if e["event"] == "summary"][-1]
assert summary["failed_rank"] == 1, summary
error = summary["error"]
assert error["message"] == "ValueError: rank 1 says boom", error
assert "in deep_cause" in error["traceback"] and error["timestamp"].isdigit(), error
PY

# The user's values win; with --log-dir the files stay beside the logs.
expect_exit 1 timeout -k 5 90 "$DDL" run --np 2 --log-dir "$t/logs" -x TORCH_NCCL_ASYNC_ERROR_HANDLING=3 \
  -- "$python" "$program"
expect_contains "$t/out" "[0] TORCH_NCCL_ASYNC_ERROR_HANDLING=3"
expect_contains "$t/out" "[0] NCCL_ASYNC_ERROR_HANDLING=1"
expect_contains "$t/out" "[1] TORCHELASTIC_ERROR_FILE=$t/logs/rank-1.attempt-0.error.json"
[[ -s $t/logs/rank-1.attempt-0.error.json ]] || fail "no error file under --log-dir"
expect_contains "$t/err" "ValueError: rank 1 says boom"

# Not torch: none of it.
printf '[job]\nframeworks = ["jax"]\n' >"$t/jax.toml"
expect_exit 0 timeout -k 5 30 "$DDL" render "$t/jax.toml" --format env --rank 0 --np 1
expect_not_contains "$t/out" "ASYNC_ERROR_HANDLING"
