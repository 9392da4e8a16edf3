#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [container] on hosts given with slots only (issue 40, item 9): on a machine
# without GPUs `-H localhost:2` asks podman for no GPU (it asked for
# nvidia.com/gpu=0 and 1, and podman failed, exit 126, with no hint); where
# ddl binds GPUs that podman cannot give, the failure names [launch] bind_gpus.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
source "$(dirname "$0")/container_podman.inc"
pod_up

# Test doubles of nvidia-smi: no GPU, and two (which podman has no CDI spec for).
fake_nvidia_smi "$t/none" 0
fake_nvidia_smi "$t/two" 2
cat >"$t/job.toml" <<EOF
[job]
command = ["sh", "-c", "echo \"rank=\$DDL_RANK gpus=\${CUDA_VISIBLE_DEVICES-unset} \$(cat /ddl-image)\""]
[container]
image = "$pod_image"
EOF

expect_exit 0 env PATH="$t/none:$PATH" timeout 60 "$DDL" run "$t/job.toml" -H localhost:2
for r in 0 1; do expect_contains "$t/out" "[$r] rank=$r gpus=unset ddl test image"; done
pod_none_left "a job without GPUs"
echo "ok: no GPU asked of podman on a machine without GPUs"

expect_exit 126 env PATH="$t/two:$PATH" timeout 60 "$DDL" run "$t/job.toml" -H localhost:2
expect_contains "$t/err" "exited with code 126"
expect_contains "$t/err" "container was given GPUs (nvidia.com/gpu="
expect_contains "$t/err" "and podman exited 126 before the program ran: [launch] bind_gpus gives each rank the GPUs of its slots; if localhost has no such GPU (or no CDI spec for it), set [launch] bind_gpus = false"
pod_none_left "a job whose GPUs podman could not give"
echo "ok: podman's GPU failure names [launch] bind_gpus"
