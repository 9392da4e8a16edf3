#!/usr/bin/env bash
# A real PyTorch program (gloo, init_process_group via env://) on 4 local
# ranks under ddl run: its allreduce gives the right sum on every rank.
source "$(dirname "$0")/common.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch with gloo is not importable"

# A port free right now (torch.master_port = $port is resolved by ddl only for
# some backends; a fixed 29500 would collide with parallel tests).
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$t/job.toml" <<TOML
[job]
command = ["$python", "$DDL_SOURCE_DIR/tests/fixtures/clients/torch_allreduce.py"]
env = { GLOO_SOCKET_IFNAME = "lo" }
grace = "2s"
[launch]
np = 4
[torch]
master_port = $port
TOML
expect_exit 0 timeout -k 5 120 "$DDL" run "$t/job.toml"
for rank in 0 1 2 3; do
  expect_contains "$t/out" "[$rank] rank $rank of 4: allreduce sum 10 (want 10) ok"
done
