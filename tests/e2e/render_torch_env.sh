#!/usr/bin/env bash
# The torch env that `ddl render --format env` gives is enough for real
# PyTorch: two processes join with init_process_group("env://") and allreduce.
source "$(dirname "$0")/common.inc"
# Debian's python3-torch lives in /usr/bin/python3's packages; a pyenv python3
# first on PATH may not see it.
py=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import torch.distributed' 2>/dev/null; then py=$candidate; break; fi
done
[[ -n $py ]] || skip "python3-torch is not installed"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$t/job.toml" <<TOML
[job]
name = "torch-env-$$"
command = ["python3", "worker.py"]
[torch]
master_port = $port
TOML
for rank in 0 1; do
  expect_exit 0 timeout 10 "$DDL" render "$t/job.toml" --np 2 --format env --rank "$rank"
  cp "$t/out" "$t/env.$rank"
done

cat >"$t/worker.py" <<'PY'
import os, shlex, sys
for line in open(sys.argv[1]):  # NAME=VALUE, the value quoted for sh
    name, _, value = line.rstrip("\n").partition("=")
    os.environ[name] = "".join(shlex.split(value))
import torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="env://")
x = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(x)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} local {os.environ['LOCAL_RANK']} sum {x.item()}")
dist.destroy_process_group()
PY
timeout 60 "$py" "$t/worker.py" "$t/env.0" >"$t/r0" 2>&1 &
p0=$!
timeout 60 "$py" "$t/worker.py" "$t/env.1" >"$t/r1" 2>&1 || { kill "$p0" 2>/dev/null; cat "$t/r1" "$t/r0"; fail "rank 1 failed"; }
wait "$p0" || { cat "$t/r0"; fail "rank 0 failed"; }
expect_contains "$t/r0" "rank 0/2 local 0 sum 3.0"
expect_contains "$t/r1" "rank 1/2 local 1 sum 3.0"
