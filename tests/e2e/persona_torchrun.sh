#!/usr/bin/env bash
# `ddl torchrun` (issue 29): torchrun's documented usage lines
# (torch/distributed/run.py's docstring) run unchanged after `ddl`, with real
# PyTorch (gloo, torch's own env:// init; `python3 -m torch.distributed.run`
# itself crashes on stock Debian 12), on this machine; the options that have
# no meaning when one launcher starts every node are refused (exit 2) with
# the reason; Ctrl-C ends the job with one line.
source "$(dirname "$0")/common.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch with gloo is not importable"
script=$DDL_SOURCE_DIR/tests/fixtures/clients/torch_allreduce.py
cd "$t"
torchrun() { timeout -k 5 120 "$DDL" torchrun --python "$python" "$@"; }
all_ok() {
  local r
  for ((r = 0; r < $1; r++)); do expect_contains "$t/out" "[$r] rank $r of $1: allreduce sum"; done
  expect_not_contains "$t/out" "WRONG"
}

# Single-node multi-worker.
expect_exit 0 torchrun --standalone --nnodes=1 --nproc-per-node=4 "$script"
all_ok 4
# Stacked single-node multi-worker: an endpoint on this machine, port 0.
expect_exit 0 torchrun --rdzv-backend=c10d --rdzv-endpoint=localhost:0 --nnodes=1 --nproc-per-node=2 "$script"
all_ok 2
# Fault tolerant, and elastic (min=1, max=4): the one host here.
expect_exit 0 torchrun --nnodes=1 --nproc-per-node=2 --max-restarts=3 --rdzv-id=job-7 --rdzv-backend=c10d \
  --rdzv-endpoint=127.0.0.1 "$script"
all_ok 2
expect_exit 0 torchrun --nnodes=1:4 --nproc-per-node=2 --max-restarts=3 --rdzv-id=job-8 --rdzv-backend=c10d \
  --rdzv-endpoint=localhost:29400 "$script"
all_ok 2
# The old underscore spellings, and torchrun's default of one process.
expect_exit 0 torchrun --nproc_per_node 2 --master_port 0 "$script"
all_ok 2
expect_exit 0 torchrun "$script"
all_ok 1

# What ranks get: torch's variables, -u, the job's name from --rdzv-id, and
# the launcher's environment (as torchrun's workers inherit it).
cat >"$t/env.py" <<'PY'
import os, sys
print("argv=%s buffered=%s id=%s local=%s/%s role=%s mine=%s" % (sys.argv[1:], "-u" not in sys.orig_argv,
      os.environ["TORCHELASTIC_RUN_ID"], os.environ["LOCAL_RANK"], os.environ["LOCAL_WORLD_SIZE"],
      os.environ["ROLE_NAME"], os.environ.get("MY_SETTING")))
PY
MY_SETTING=kept expect_exit 0 torchrun --nproc-per-node=2 --rdzv-id=exp-1 --role trainer "$t/env.py" --lr 0.1
expect_contains "$t/out" "[1] argv=['--lr', '0.1'] buffered=False id=exp-1 local=1/2 role=trainer mine=kept"
# -m MODULE, and --no-python.
mkdir -p "$t/pkg" && cp "$t/env.py" "$t/pkg/show.py" && touch "$t/pkg/__init__.py"
expect_exit 0 torchrun --nproc-per-node=1 -m pkg.show x
expect_contains "$t/out" "[0] argv=['x']"
printf '#!/bin/sh\necho "plain $RANK"\n' >"$t/plain.sh" && chmod +x "$t/plain.sh"
expect_exit 0 timeout 30 "$DDL" torchrun --no-python --nproc-per-node=2 "$t/plain.sh"
expect_contains "$t/out" "[1] plain 1"
# [job] python in a --job file.
printf '[job]\npython = "%s"\n' "$python" >"$t/job.toml"
expect_exit 0 timeout 60 "$DDL" torchrun --job "$t/job.toml" --nproc-per-node=2 "$script"
all_ok 2
# --local-ranks-filter: only those local ranks are shown.
expect_exit 0 torchrun --nproc-per-node=3 --local-ranks-filter=0,2 "$script"
expect_contains "$t/out" "[2] rank 2 of 3"
expect_not_contains "$t/out" "[1] rank 1"
# The plan, without launching: one host, 4 ranks, no CUDA_VISIBLE_DEVICES.
expect_exit 0 torchrun --dry-run --nproc-per-node=4 "$script"
expect_contains "$t/out" "$python -u $script"
expect_not_contains "$t/out" "CUDA_VISIBLE_DEVICES"

# Refused: exit 2 and one line why (and what to write instead).
# Refusals, checked under --dry-run: the hosts here (node-a, ...) do not
# resolve, and a real launch looks every host up before the plan's checks.
refused() {
  local want=$1; shift
  expect_exit 2 timeout 10 "$DDL" torchrun --dry-run "$@"
  expect_contains "$t/err" "ddl: error: $want"
}
refused "--node-rank 1: ddl starts every node from this one command and numbers them itself (node ranks 0.. in host order); run it once, with every host in -H or --hostfile, without --node-rank" \
  --nnodes=2 --node-rank=1 --nproc-per-node=8 t.py
refused "--rdzv-endpoint nodex:29400: ddl puts rank 0 on the job's first host (node-a) and sets MASTER_ADDR to it, and runs the rendezvous itself on this machine; list nodex first in -H (or the hostfile), or drop --rdzv-endpoint" \
  -H node-a,node-b --nnodes=2 --rdzv-backend=c10d --rdzv-endpoint=nodex:29400 t.py
refused "--master-addr 10.9.9.9: ddl puts rank 0 on the job's first host (node-a)" -H node-a --master-addr 10.9.9.9 t.py
refused "--nnodes 2: the job has 1 host (localhost); ddl starts every node itself, so name them all: -H node1,node2 or --hostfile FILE" \
  --nnodes=2 --nproc-per-node=1 t.py
refused "--standalone runs one node, but the job has 2 hosts: drop --standalone to run on all of them" \
  -H node-a,node-b --standalone t.py
refused "--numa-binding socket: ddl binds a rank to its GPU's NUMA node (node, ddl's --bind gpu), or to cores or NUMA nodes dealt among the host's ranks (ddl run --bind core|numa); it has no socket, exclusive or core-complex binding" --numa-binding socket t.py
expect_exit 0 timeout 10 "$DDL" torchrun --dry-run --numa-binding node --nproc-per-node 2 t.py
expect_contains "$t/out" "CPU binding (bind = gpu, from each host's topology):"
refused "--logs-specs mine: a torchrun logging plugin has no meaning under ddl" --logs-specs mine t.py
refused "-r 3: ddl always shows rank output on its own stdout and stderr" -r 3 t.py
refused "--tee 3: ddl writes rank logs to --log-dir: add --log-dir DIR" --tee 3 t.py
refused "--nproc-per-node xpu: not a number, gpu, cpu or auto (ddl does not count xpu devices)" --nproc-per-node xpu t.py
refused "--nnodes 1:2: an elastic range needs a number of ranks per node: write --nproc-per-node N" \
  --nnodes 1:2 --nproc-per-node gpu t.py
refused "--start-method thread: not one of spawn, fork, forkserver" --start-method thread t.py
refused "unknown option '--nproc-per-nod' for 'ddl torchrun'; did you mean '--nproc-per-node'?" --nproc-per-nod 2 t.py
refused "no training script: ddl torchrun [options] SCRIPT [args] (or -m MODULE)" --nproc-per-node 2
expect_exit 2 env PET_NODE_RANK=3 "$DDL" torchrun t.py
expect_contains "$t/err" "ddl: error: PET_NODE_RANK=3: ddl starts every node"

# --help: torchrun's options, ddl's own, examples.
expect_exit 0 "$DDL" torchrun --help
expect_contains "$t/out" "torchrun's options (PyTorch 2.9):"
expect_contains "$t/out" "  --nproc-per-node,--nproc_per_node N|gpu|cpu|auto"
expect_contains "$t/out" "  ddl torchrun --standalone --nnodes=1 --nproc-per-node=4 train.py"

# Ctrl-C ends the job with one line from ddl, as torchrun prints one.
cat >"$t/sleeper.py" <<'PY'
import os, time
print("up", os.environ["RANK"], flush=True)
time.sleep(60)
PY
timeout -k 5 60 "$DDL" torchrun --python "$python" --nproc-per-node=2 "$t/sleeper.py" >"$t/out" 2>"$t/err" &
pid=$!
for _ in $(seq 100); do [[ $(grep -c '] up ' "$t/out") == 2 ]] && break; sleep 0.1; done
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
[[ $rc == 130 ]] || { cat "$t/err"; fail "Ctrl-C: exit $rc, want 130"; }
expect_contains "$t/err" "ddl: interrupted by SIGINT: stopped the 2 ranks (exit 130)"
[[ $(grep -c "interrupted" "$t/err") == 1 ]] || { cat "$t/err"; fail "more than one line"; }
