#!/usr/bin/env bash
# TF_CONFIG, the Horovod, JAX and MPI variables as real ranks see them under
# ddl run: cluster identical everywhere, task indices unique, ranks 0..N-1
# exactly once (each rank writes what it saw; a checker compares).
source "$(dirname "$0")/common.inc"
command -v python3 >/dev/null || skip "python3 is not installed"
fixtures="$DDL_SOURCE_DIR/tests/fixtures/clients"
mkdir "$t/seen"

cat >"$t/job.toml" <<TOML
[job]
command = ["python3", "$fixtures/report_env.py", "$t/seen"]
frameworks = ["torch", "tensorflow", "horovod", "jax", "mpi"]
[launch]
np = 6
[tensorflow]
chief = 1
ps = 1
evaluator = 1
TOML
expect_exit 0 timeout -k 5 60 "$DDL" run "$t/job.toml"
expect_exit 0 python3 "$fixtures/check_env.py" "$t/seen" 6
expect_contains "$t/out" "check_env: 6 ranks, ok"

