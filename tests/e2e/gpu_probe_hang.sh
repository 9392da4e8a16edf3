#!/usr/bin/env bash
# A local GPU probe that hangs (nvidia-smi stuck on a wedged driver) costs
# its 10 s bound and is said on stderr, naming the host and why; the probe
# is not left running. (issue 27, item 13)
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

# A stand-in for a hung nvidia-smi: NOT nvidia-smi, a script that sleeps.
mkdir "$t/bin"
printf '#!/bin/sh\nexec "%s" 60\n' "$nap" >"$t/bin/nvidia-smi"
chmod +x "$t/bin/nvidia-smi"

start=$(date +%s.%N)
expect_exit 0 timeout -k 2 30 env PATH="$t/bin:$PATH" "$DDL" run -- true
end=$(date +%s.%N)
expect_contains "$t/err" "ddl: warning: localhost: nvidia-smi -L did not answer within 10s (a hung GPU driver?); it was killed, and the GPUs are counted from /proc/driver/nvidia/gpus"
awk -v a="$start" -v b="$end" 'BEGIN { d = b - a; printf "ddl run with a hung nvidia-smi: %.2fs\n", d; exit !(d >= 10 && d < 14) }' >&2 ||
  fail "took outside 10 to 14 s"
expect_none_left 2

# `ddl hosts` probes the same way and says the same.
expect_exit 0 timeout -k 2 30 env PATH="$t/bin:$PATH" "$DDL" hosts
expect_contains "$t/err" "ddl: warning: localhost: nvidia-smi -L did not answer within 10s"
expect_none_left 2
echo ok
