#!/usr/bin/env bash
# `ddl deepspeed` beside DeepSpeed's own `deepspeed` launcher (issue 39), the
# same lines on 2 namespace hosts: a hostfile of both with slots=2, then
# --include, --exclude, --num_gpus, --master_port, a .deepspeed_env in the
# working directory. Each rank writes what it was given (the variables,
# argv; tests/fixtures/clients/deepspeed_step.py) and the two are compared
# (compare_ranks.py); what may differ is listed below with why. The first
# line also runs deepspeed.init_distributed() and one training step of a
# tiny model with the gloo backend on the CPU: the same weights everywhere.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(framework_python deepspeed)
venv_bin=$(dirname "$python")
[[ -x $venv_bin/deepspeed ]] || fail "$venv_bin/deepspeed is missing beside the deepspeed module"
have pdsh pdsh || exit 0
NETNS_NAMED=1 netns_up 2
# DeepSpeed's launcher reaches the hosts through pdsh's ssh (the `ssh` in
# the PATH, with this config); ddl with -F.
mkdir -p "$t/bin" "$t/work"
printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$NETNS_DIR/ssh_config" >"$t/bin/ssh"
chmod +x "$t/bin/ssh"
cp "$DDL_SOURCE_DIR/tests/fixtures/clients/deepspeed_step.py" "$t/work/train.py"
cd "$t/work"
printf 'h1 slots=2\nh2 slots=2\n' >hostfile
# Both launchers run with the venv first in the PATH and the CPU as DeepSpeed's accelerator.
in_client() {
  timeout -k 5 "$1" ip netns exec "$NETNS_CLIENT" env PATH="$t/bin:$venv_bin:$PATH" DS_ACCELERATOR=cpu \
    NCCL_DEBUG=WARN "${@:2}"
}
also_allowed=()
allowed=(
  "env.MASTER_ADDR=DeepSpeed asks the first host for the first address of \`hostname -I\`; ddl names that host as the hostfile does"
  "env.NCCL_DEBUG=DeepSpeed passes NCCL_* with its CUDA accelerator only (the CPU's exports none); ddl passes them always"
)

# compare NAME SECONDS DEEPSPEED_OPTIONS... -- SCRIPT_ARGS...: the same line
# under both launchers, then the two sets of ranks side by side.
compare() {
  local name=$1 seconds=$2; shift 2
  local options=() rc
  while [[ $1 != -- ]]; do options+=("$1"); shift; done
  shift
  mkdir -p "$t/$name.peer" "$t/$name.ddl"
  # Where the ranks write: DeepSpeed passes its .deepspeed_env, not the whole environment.
  printf 'FROM_DS_ENV=from .deepspeed_env\nRANK_ENV_DIR=%s\n' "$t/$name.peer" >.deepspeed_env
  expect_exit 0 in_client "$seconds" deepspeed "${options[@]}" train.py "$@"
  cp "$t/out" "$t/$name.peer.out"
  printf 'FROM_DS_ENV=from .deepspeed_env\nRANK_ENV_DIR=%s\n' "$t/$name.ddl" >.deepspeed_env
  expect_exit 0 in_client "$seconds" "$DDL" deepspeed -F "$NETNS_DIR/ssh_config" \
    "${options[@]}" train.py "$@"
  cp "$t/out" "$t/$name.ddl.out"
  rc=0
  local allow=("${allowed[@]}" "${also_allowed[@]}")
  # Without --master_port: DeepSpeed's 29500, ddl's a free port (two jobs on one host do not collide).
  [[ " ${options[*]} " == *" --master_port "* ]] || allow+=("env.MASTER_PORT=DeepSpeed's default is 29500; ddl's a free port")
  python3 "$DDL_SOURCE_DIR/tests/fixtures/clients/compare_ranks.py" "$t/$name.peer" "$t/$name.ddl" "${allow[@]}" \
    >"$t/$name.compare" || rc=$?
  echo "== $name: deepspeed ${options[*]} train.py $*"
  cat "$t/$name.compare"
  ((rc == 0)) || fail "$name: ddl deepspeed's ranks differ from deepspeed's"
}

compare hostfile 240 --hostfile hostfile --master_port 29561 -- --step --tag "two words"
for r in 0 1 2 3; do expect_contains "$t/hostfile.ddl.out" "[$r] rank $r of 4 (gloo): one step, weights"; done
compare include 120 --hostfile hostfile --include "h1:1@h2:0" -- --tag x
# h1 keeps 1 slot, h2 both: DeepSpeed's launch.py sets LOCAL_RANK to the
# global rank modulo the node's rank count (h2's ranks 1, 2 get 1, 0); ddl
# numbers each node's ranks from 0 in rank order (0, 1).
why="DeepSpeed's LOCAL_RANK is RANK % LOCAL_SIZE, wrong where nodes hold different counts; ddl's counts from 0 on each node"
also_allowed=("env.LOCAL_RANK=$why" "argv=$why (--local_rank=N)" "local_rank_arg=$why")
compare exclude 120 --hostfile hostfile --exclude "h1:0" -- --tag x
also_allowed=()
compare num_gpus 120 --hostfile hostfile --num_gpus 1 --master_port 29562 --
echo "ok: ddl deepspeed gives each rank what deepspeed gives it"
