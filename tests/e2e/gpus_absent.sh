#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPUs that are not there (issue 40, item 9): hosts given with slots only
# (`-H host:N`) bind GPU `local rank` only where a probe found GPUs. On a
# machine without GPUs `-H localhost:2` sets no CUDA_VISIBLE_DEVICES (it set
# 0 and 1), in the launch, --dry-run and render alike; over ssh each host's
# GPUs are counted over the launch's own connection: still one login shell
# over one connection per host. Where GPUs are found, ranks get them as before.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"

# Test doubles of nvidia-smi: no GPU, and two.
fake_nvidia_smi "$t/none" 0
fake_nvidia_smi "$t/two" 2
show='echo "rank=$DDL_RANK gpus=${CUDA_VISIBLE_DEVICES-unset}"'

# This machine without GPUs.
expect_exit 0 env PATH="$t/none:$PATH" timeout 30 "$DDL" run -H localhost:2 -- sh -c "$show"
for r in 0 1; do expect_contains "$t/out" "[$r] rank=$r gpus=unset"; done
expect_exit 0 env PATH="$t/none:$PATH" timeout 30 "$DDL" run -H localhost:2 --dry-run -- true
expect_not_contains "$t/out" "CUDA_VISIBLE_DEVICES"
expect_exit 0 env PATH="$t/none:$PATH" timeout 30 "$DDL" render -H localhost:2 --format env --rank 1 -- true
expect_not_contains "$t/out" "CUDA_VISIBLE_DEVICES"
# With two GPUs, one each, as before.
expect_exit 0 env PATH="$t/two:$PATH" timeout 30 "$DDL" run -H localhost:2 -- sh -c "$show"
for r in 0 1; do expect_contains "$t/out" "[$r] rank=$r gpus=$r"; done
echo "ok: this machine binds only the GPUs it has"

# Over ssh, hosts without GPUs (their nvidia-smi finds none): counted over
# the connection that then carries the ranks.
NETNS_COUNT_SHELLS=1 netns_up 2
cp "$t/none/nvidia-smi" "$NETNS_DIR/bin/nvidia-smi" 2>/dev/null ||
  { mkdir -p "$NETNS_DIR/bin"; cp "$t/none/nvidia-smi" "$NETNS_DIR/bin/nvidia-smi"; }
shells_are() {
  local i shells conns
  for i in "${!NETNS_HOSTS[@]}"; do
    shells=$(netns_shells "$i"); conns=$(netns_handshakes "$i")
    [[ $shells == 1 && $conns == 1 ]] ||
      fail "$1: host h$((i + 1)) saw $shells login shells over $conns connections, want 1 over 1"
  done
  : >"$NETNS_DIR/shells"
}
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 2)" --backend ssh -- sh -c "$show"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] rank=$r gpus=unset"; done
shells_are "hosts without GPUs"
cp "$t/two/nvidia-smi" "$NETNS_DIR/bin/nvidia-smi"
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$(netns_hostspec 2)" --backend ssh -- sh -c "$show"
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] rank=$r gpus=$((r % 2))"; done
shells_are "hosts with two GPUs"
echo "ok: ssh hosts bind only the GPUs they have, counted over the launch's connection"
