#!/usr/bin/env bash
# Real Horovod (issue 39): horovod.torch's hvd.init() and hvd.allreduce of a
# torch tensor, one rank on each of 4 namespace hosts over ssh, under ddl's
# Horovod rendezvous (Gloo), then the same job under --backend mpirun (one
# Open MPI world, Horovod's MPI controller). Horovod comes from the project's
# Python environment (scripts/deps.sh test); under CI its absence fails.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(framework_python horovod.torch)
script=$DDL_SOURCE_DIR/tests/fixtures/clients/horovod_allreduce.py
# Horovod 0.28.1's hvd.init() dies of SIGSEGV (in its process-set Gloo
# context) on a host whose own name does not resolve: the hosts know theirs.
NETNS_NAMED=1 netns_up 4
job=$t/job.toml
cat >"$job" <<TOML
[job]
frameworks = ["horovod"]
command = ["$python", "$script"]
grace = "2s"
[rendezvous]
timeout = "60s"
TOML
cat "$NETNS_DIR/ssh.toml" >>"$job"
spec=$(netns_hostspec 1)
sum="allreduce sum 10 (want 10) ok"

# Gloo: ddl starts the ranks and answers Horovod's HTTP rendezvous.
DDL_TIMEOUT=120 expect_exit 0 ddl_ssh run "$job" -H "$spec" --backend ssh
for r in 0 1 2 3; do
  expect_contains "$t/out" "[$r] rank $r of 4 (local 0 of 1, cross $r of 4, gloo) on h$((r + 1)): $sum"
done
echo "ok: hvd.allreduce over ddl's Gloo rendezvous on 4 hosts"

# MPI: the mpirun backend starts one world; Horovod's MPI controller.
have mpirun openmpi-bin || exit 0
cat >"$t/mpi.toml" <<TOML
[mpirun]
args = ["--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "$NETNS_NET.0/24",
        "--mca", "oob_tcp_if_include", "$NETNS_NET.0/24"]
TOML
cat "$t/mpi.toml" >>"$job"
DDL_TIMEOUT=120 expect_exit 0 ddl_ssh run "$job" -H "$spec" --backend mpirun
for r in 0 1 2 3; do
  expect_contains "$t/out" "[$r] rank $r of 4 (local 0 of 1, cross $r of 4, mpi) on h$((r + 1)): $sum"
done
echo "ok: hvd.allreduce in one MPI world (--backend mpirun) on 4 hosts"
