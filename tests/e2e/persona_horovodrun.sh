#!/usr/bin/env bash
# `ddl horovodrun` (issue 29): horovodrun's documented lines run after `ddl`.
# Horovod cannot be installed here, so the ranks run the PROTOCOL CLIENT of
# horovod_rendezvous.sh (tests/fixtures/clients/horovod_http_client.py, NOT
# Horovod) against the Gloo rendezvous ddl serves; --mpi runs real mpi4py
# under the mpirun backend. The tuning flags reach every rank as the
# variables horovodrun's config_parser sets; refused flags exit 2.
source "$(dirname "$0")/common.inc"
python=$(command -v python3) || skip "python3 is not installed"
client=$DDL_SOURCE_DIR/tests/fixtures/clients/horovod_http_client.py
hvd() { timeout -k 5 90 "$DDL" horovodrun "$@"; }

# Horovod's README: horovodrun -np 4 -H localhost:4 python train.py
expect_exit 0 hvd -np 4 -H localhost:4 "$python" "$client"
for r in 0 1 2 3; do
  expect_contains "$t/out" "[$r] rank $r: global 4 ranks on localhost; local 4; cross 1; controller gloo gloo"
done
# The tuning flags: Horovod's variables, as horovodrun sets them.
expect_exit 0 hvd -np 2 --fusion-threshold-mb 32 --cycle-time-ms 3.5 --cache-capacity 0 --hierarchical-allreduce \
  --no-hierarchical-allgather --autotune --autotune-log-file at.csv --timeline-filename tl.json \
  --timeline-mark-cycles --no-stall-check --stall-check-warning-time-seconds 10 --mpi-threads-disable \
  --num-nccl-streams 2 --thread-affinity 1 --gloo-timeout-seconds 77 --log-level DEBUG --log-without-timestamp \
  --tcp --network-interface lo -prefix-timestamp \
  sh -c 'env | grep -E "^(HOROVOD_|NCCL_|GLOO_SOCKET|PYTHONUNBUFFERED)" | sort'
for want in HOROVOD_FUSION_THRESHOLD=33554432 HOROVOD_CYCLE_TIME=3.5 HOROVOD_CACHE_CAPACITY=0 \
    HOROVOD_HIERARCHICAL_ALLREDUCE=1 HOROVOD_HIERARCHICAL_ALLGATHER=0 HOROVOD_AUTOTUNE=1 HOROVOD_AUTOTUNE_LOG=at.csv \
    HOROVOD_TIMELINE=tl.json HOROVOD_TIMELINE_MARK_CYCLES=1 HOROVOD_STALL_CHECK_DISABLE=1 \
    HOROVOD_STALL_CHECK_TIME_SECONDS=10 HOROVOD_MPI_THREADS_DISABLE=1 HOROVOD_NUM_NCCL_STREAMS=2 \
    HOROVOD_THREAD_AFFINITY=1 HOROVOD_GLOO_TIMEOUT_SECONDS=77 HOROVOD_LOG_LEVEL=DEBUG HOROVOD_LOG_HIDE_TIME=1 \
    NCCL_IB_DISABLE=1 HOROVOD_GLOO_IFACE=lo GLOO_SOCKET_IFNAME=lo NCCL_SOCKET_IFNAME=lo PYTHONUNBUFFERED=1 \
    HOROVOD_RANK=1 HOROVOD_SIZE=2; do
  grep -qE "Z \[1\] $want\$" "$t/out" || { cat "$t/out"; fail "rank 1 lacks $want (with a timestamp)"; }
done
# Autotune's knobs only with --autotune, as horovodrun exports them.
expect_exit 0 hvd -np 1 --autotune-warmup-samples 5 sh -c 'env | grep -c AUTOTUNE || true'
expect_contains "$t/out" "[0] 0"
# The elastic range is ddl's --np MIN:MAX: two ranks here, at most.
expect_exit 0 hvd -np 2 --min-np 1 --max-np 3 -H localhost:2 sh -c 'echo "of $HOROVOD_SIZE"'
expect_contains "$t/out" "[1] of 2"
expect_exit 2 timeout 10 "$DDL" horovodrun -np 2 --min-np 3 --max-np 2 true
expect_contains "$t/err" "ddl: error: --min-np 3 is more than --max-np 2"

# --mpi: the mpirun backend, one MPI world.
if command -v mpirun >/dev/null && /usr/bin/python3 -c "import mpi4py" 2>/dev/null; then
  expect_exit 0 hvd --mpi -np 2 /usr/bin/python3 -c \
    'from mpi4py import MPI; import os; c = MPI.COMM_WORLD; print("mpi", c.Get_rank(), c.Get_size(), os.environ["HOROVOD_RANK"])'
  expect_contains "$t/out" "[0] mpi 0 2 0"
  expect_contains "$t/out" "[1] mpi 1 2 1"
fi

# Refused: exit 2 and why.
refused() {
  local want=$1; shift
  expect_exit 2 timeout 10 "$DDL" horovodrun "$@"
  expect_contains "$t/err" "ddl: error: $want"
}
refused "--jsrun: LSF's jsrun is not a ddl backend: use --gloo (ddl's own) or --mpi" --jsrun -np 2 python t.py
refused "-cb: ddl cannot see how Horovod was built: run horovodrun --check-build itself" -cb
refused "--config-file c.yaml: ddl does not read Horovod's YAML config" --config-file c.yaml -np 1 python t.py
refused "--autotune-gaussian-process-noise 1.5: must be a number in [0, 1]" --autotune-gaussian-process-noise 1.5 python
refused "--fusion-threshold-mb -1: not a whole number" --fusion-threshold-mb -1 python
refused "--log-level LOUD: not one of TRACE, DEBUG, INFO, WARNING, ERROR, FATAL" --log-level LOUD python
refused "--gloo and --mpi: choose one" --gloo --mpi python
refused "no command: ddl horovodrun [options] COMMAND [args]" -np 2
refused "unknown option '--fusion-treshold-mb' for 'ddl horovodrun'; did you mean '--fusion-threshold-mb'?" \
  --fusion-treshold-mb 2 python
