#!/usr/bin/env bash
# Two real PyTorch jobs at once on one machine, neither naming a master
# port: each gets a free one (ddl's default), so both allreduces succeed and
# no rank dials the other job's store. (With a fixed 29500 the second job
# failed with "Address already in use".)
source "$(dirname "$0")/common.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch with gloo is not importable"
program="$DDL_SOURCE_DIR/tests/fixtures/clients/torch_allreduce.py"

run_job() {
  timeout -k 5 120 "$DDL" run --np 2 -x GLOO_SOCKET_IFNAME=lo -- sh -c \
    'echo "port $MASTER_PORT"; exec "$0" "$@"' "$python" "$program" 3 >"$t/out.$1" 2>"$t/err.$1"
}
run_job a & a=$!
run_job b & b=$!
status_a=0; wait "$a" || status_a=$?
status_b=0; wait "$b" || status_b=$?
for job in a b; do echo "--- job $job"; cat "$t/out.$job" "$t/err.$job"; done
((status_a == 0 && status_b == 0)) || fail "exit codes $status_a and $status_b"
for job in a b; do
  for rank in 0 1; do
    expect_contains "$t/out.$job" "[$rank] rank $rank of 2: allreduce sum 3 (want 3) ok"
  done
done
port_a=$(grep -o 'port [0-9]*' "$t/out.a" | sort -u)
port_b=$(grep -o 'port [0-9]*' "$t/out.b" | sort -u)
[[ $port_a != "$port_b" ]] || fail "both jobs got $port_a"
