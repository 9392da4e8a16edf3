#!/usr/bin/env bash
# `ddl deepspeed` (issue 29): DeepSpeed launcher lines run after `ddl`, with
# real PyTorch (gloo, env://) in the script DeepSpeed's tutorials launch
# (`deepspeed --hostfile=myhostfile train.py --deepspeed --deepspeed_config
# ds_config.json`; DeepSpeed itself is not installed here, the script reads
# what DeepSpeed's launcher gives a script): the hostfile, --include,
# --num_gpus, --local_rank=N, .deepspeed_env from home and the working
# directory, the refused options.
source "$(dirname "$0")/common.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch with gloo is not importable"
mkdir -p "$t/work" "$t/home"
cd "$t/work"
cat >train.py <<'PY'
import argparse, os
import torch, torch.distributed as dist
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, required=True)
parser.add_argument("--deepspeed", action="store_true")
parser.add_argument("--deepspeed_config")
args = parser.parse_args()
assert args.local_rank == int(os.environ["LOCAL_RANK"]), (args.local_rank, os.environ["LOCAL_RANK"])
dist.init_process_group("gloo", init_method="env://")
value = torch.tensor([1.0])
dist.all_reduce(value)
print("rank %d of %d local_rank=%d config=%s visible=%s cross=%s/%s local_size=%s env=%s,%s sum=%g" % (
    dist.get_rank(), dist.get_world_size(), args.local_rank, args.deepspeed_config,
    os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ["CROSS_RANK"], os.environ["CROSS_SIZE"],
    os.environ["LOCAL_SIZE"], os.environ.get("FROM_HOME"), os.environ.get("FROM_HERE"), float(value[0])))
dist.destroy_process_group()
PY
printf '{"train_batch_size": 8}\n' >ds_config.json
printf '# DeepSpeed hostfile\nlocalhost slots=2\n' >myhostfile
printf 'FROM_HOME=home\nFROM_HERE=home-loses\n' >"$t/home/.deepspeed_env"
printf '# comments and quotes\nexport FROM_HERE="the cwd wins"\n' >.deepspeed_env
ds() { HOME=$t/home timeout -k 5 120 "$DDL" deepspeed --python "$python" "$@"; }

# DeepSpeed's getting-started line, unchanged.
expect_exit 0 ds --hostfile=myhostfile train.py --deepspeed --deepspeed_config ds_config.json
for r in 0 1; do
  expect_contains "$t/out" "[$r] rank $r of 2 local_rank=$r config=ds_config.json visible=0,1 cross=0/1 local_size=2 env=home,the cwd wins sum=2"
done
# -H is DeepSpeed's hostfile; --include keeps slot 1 of localhost.
expect_exit 0 ds -H myhostfile --include localhost:1 train.py
expect_contains "$t/out" "[0] rank 0 of 1 local_rank=0 config=None visible=1 "
# --num_gpus on this machine without a hostfile.
expect_exit 0 ds --num_gpus=2 train.py --deepspeed_config ds_config.json
expect_contains "$t/out" "[1] rank 1 of 2 local_rank=1 config=ds_config.json visible=0,1"
# --no_local_rank: no --local_rank argument.
expect_exit 0 ds --num_gpus=1 --no_local_rank --no_python /bin/echo plain
expect_contains "$t/out" "[0] plain"
# A bad .deepspeed_env names its file and line.
printf 'NOT A LINE\n' >"$t/home/.deepspeed_env"
expect_exit 2 ds --num_gpus=1 train.py
expect_contains "$t/err" "ddl: error: $t/home/.deepspeed_env:1: not NAME=VALUE (no '='; the line is not shown: it may hold a secret)"
rm "$t/home/.deepspeed_env"

# No hostfile, no --num_gpus and no GPU here: DeepSpeed's own stop.
if ! command -v nvidia-smi >/dev/null && [[ ! -d /proc/driver/nvidia/gpus ]]; then
  expect_exit 2 ds train.py
  expect_contains "$t/err" "ddl: error: no hostfile and no GPU on this machine (DeepSpeed's launcher stops here too): write a hostfile (\`localhost slots=2\`) or --num_gpus N"
fi

refused() {
  local want=$1; shift
  expect_exit 2 timeout 10 "$DDL" deepspeed "$@"
  expect_contains "$t/err" "ddl: error: $want"
}
refused "--no_ssh: ddl starts every node from this one command" --no_ssh --node_rank=1 train.py
refused "--node_rank 1: ddl starts every node from this one command and numbers them itself" --node_rank 1 train.py
refused "--launcher mpich: ddl starts ranks over ssh (pdsh), Open MPI's mpirun (openmpi) or srun (slurm)" \
  --launcher MPICH train.py
refused "--launcher_args -S: pdsh's options have no meaning" --launcher_args=-S train.py
refused "Cannot specify num_nodes/gpus with include/exclude" --num_gpus 2 --exclude localhost:1 train.py
refused "--autotuning tune: DeepSpeed's autotuner runs its own experiments" --autotuning tune train.py
refused "--elastic_training: DeepSpeed's elastic agent has no meaning under ddl" --elastic_training train.py
refused "--bind_cores_to_rank: ddl does not bind ranks to cores; drop it" --bind_cores_to_rank train.py
refused "--venv_script v.sh: ddl runs no activation script" --venv_script v.sh train.py
refused "--save_pid: ddl writes no pid file" --save_pid train.py
refused "--num_nodes 2: the job has 1 host (localhost)" -H myhostfile --num_nodes 2 train.py
refused "--master_addr 10.9.9.9: ddl puts rank 0 on the job's first host (localhost)" -H myhostfile --master_addr 10.9.9.9 train.py
refused "no user script: ddl deepspeed [options] SCRIPT [args]" --num_gpus 1
