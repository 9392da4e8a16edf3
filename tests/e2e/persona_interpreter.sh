#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The interpreter (issue 41): `ddl torchrun` runs python3 from ddl's PATH;
# where that one cannot import torch and another Python here can, ddl says so
# before starting and how to pick it; a rank that dies of "No module named"
# names the interpreter that ran it. The PATH's python3 here is a wrapper that
# runs a real Python without its site packages (-S), so torch is not there.
source "$DDL_SOURCE_DIR/tests/e2e/common.inc"
python=$(torch_python)
[[ -n $python ]] || skip "torch is not importable"
mkdir -p "$t/bin"
printf '#!/bin/sh\nexec %s -S "$@"\n' "$python" >"$t/bin/python3"
chmod +x "$t/bin/python3"
printf 'import torch\nprint("imported")\n' >"$t/train.py"
cd "$t"

expect_exit 1 env PATH="$t/bin:$PATH" timeout -k 5 60 "$DDL" torchrun --nproc-per-node=2 train.py
expect_contains "$t/err" "ddl: warning: $t/bin/python3 cannot import torch, which this job needs;"
expect_contains "$t/err" "can: pick it with --python "
# Both ranks fail at once; the first failure seen (either rank) is the one named.
grep -Eq "^ddl: rank [01] ran $t/bin/python3 on localhost, which has no module 'torch': name another with --python or \[job\] python$" "$t/err" ||
  fail "no rank named the interpreter without torch"
[[ $(grep -c "cannot import torch" "$t/err") == 1 ]] || fail "the warning comes once"

# The interpreter it names runs the job.
other=$(sed -n "s|.* can: pick it with --python \([^ ]*\) or .*|\1|p" "$t/err")
expect_exit 0 env PATH="$t/bin:$PATH" timeout -k 5 60 "$DDL" torchrun --nproc-per-node=1 --python "$other" train.py
expect_contains "$t/out" "[0] imported"
expect_not_contains "$t/err" "cannot import torch"

# ddl run with a bare python3 names it as the first on PATH.
expect_exit 1 env PATH="$t/bin:$PATH" timeout -k 5 60 "$DDL" run --np 1 python3 train.py
expect_contains "$t/err" "ddl: rank 0 ran python3 (the first on its PATH) on localhost, which has no module 'torch'"
echo PASS
