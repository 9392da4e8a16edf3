#!/usr/bin/env bash
# The watchdog's evidence on a stock host (issue 30) and its bounded dumpers
# (issue 27, item 3), local ranks. dump = "auto" (the default): a C program
# stuck in a function is dumped by gdb, which names the function, and the
# rank stuck elsewhere is named as the suspect (also in --json's summary);
# a torch gloo job whose rank 1 never joins an all_reduce is dumped by
# Python's faulthandler where py-spy is missing, rank 1 is the suspect with
# its Python frame and its lagging step. dump = "SIGUSR1" on a program
# without a handler: the report says the dump signal killed the ranks. A
# py-spy that never returns (a test double) is killed at dump_timeout,
# Ctrl-C ends ddl while it runs, and after `kill -9` of ddl nothing is left.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
command -v python3 >/dev/null || skip "python3 not installed"

# 1. A native program under gdb: rank 1 is in another function.
if have gdb gdb && have cc gcc; then
  cc -g -O0 -o "$t/stuck-$marker" "$DDL_SOURCE_DIR/tests/fixtures/watchdog/stuck.c"
  cat >"$t/native.toml" <<TOML
[job]
command = ["$t/stuck-$marker"]
grace = "1s"
[watchdog]
stall = "2s"
dump_timeout = "20s"
TOML
  start=$SECONDS
  expect_exit 5 timeout -k 5 60 "$DDL" run "$t/native.toml" --np 3
  expect_contains "$t/err" "asking every rank for its stacks (py-spy, gdb or Python's faulthandler)"
  expect_contains "$t/err" "by gdb:"
  grep -qE "^ddl: suspect: rank 1 on localhost: in .*lost_in_here" "$t/err" || { cat "$t/err"; fail "rank 1 not the suspect"; }
  grep -qE "^ddl: ranks 0,2: in .*wait_for_peers" "$t/err" || { cat "$t/err"; fail "ranks 0,2 not grouped"; }
  grep -qE "^  \[0\] #[0-9]+ .* wait_for_peers \(\) at .*stuck.c:4" "$t/err" || fail "no native frame of rank 0"
  echo "native dump by gdb: $((SECONDS - start))s from start to exit (stall 2s)"
  expect_none_left 2
  expect_exit 5 timeout -k 5 60 "$DDL" run "$t/native.toml" --np 3 --json
  python3 - "$t/out" <<'PY' || fail "stall_groups missing from the JSON summary"
import json, sys
summary = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "summary"][0]
groups = summary["stall_groups"]
assert groups[0]["suspect"] and groups[0]["ranks"] == [1] and groups[0]["host"] == "localhost", groups
assert "lost_in_here" in groups[0]["where"], groups
assert groups[-1]["ranks"] == [0, 2] and not groups[-1]["suspect"], groups
PY
  expect_none_left 2
fi

# 2. torch with gloo: rank 1 stops before step 2's all_reduce.
py=$(torch_python)
if [[ -n $py ]] && ! command -v py-spy >/dev/null; then
  cat >"$t/job.py" <<'PY'
import os, time
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(1)
for step in range(3):
    if rank == 1 and step == 2:
        time.sleep(600)
    print(f"step {step}", flush=True)
    dist.all_reduce(t)
PY
  cat >"$t/torch.toml" <<TOML
[job]
command = ["$py", "$t/job.py", "$marker"]
frameworks = ["torch"]
grace = "1s"
[watchdog]
stall = "20s"
progress = "step (\\\\d+)"
dump_timeout = "20s"
TOML
  # The gang is frozen before any rank is signalled for its dump (issue
  # 41, item 4): rank 1's SIGABRT no longer ends its peers' all_reduce
  # before their own dumps land, so ranks 0,2 are in all_reduce every time.
  expect_exit 5 timeout -k 5 120 "$DDL" run "$t/torch.toml" --np 3
  expect_contains "$t/err" "ddl: suspect: rank 1 on localhost: at step 1 while ranks 0,2 reached step 2"
  grep -qE "^ddl: suspect: rank 1 on localhost: File \".*job.py\", line 9 in <module>" "$t/err" ||
    { cat "$t/err"; fail "rank 1's Python frame is not the suspect's"; }
  grep -qE "^ddl: ranks 0,2: File \".*distributed_c10d.py\", line [0-9]+ in all_reduce" "$t/err" ||
    { cat "$t/err"; fail "ranks 0,2 are not grouped in all_reduce"; }
  expect_contains "$t/err" "by faulthandler (SIGABRT; PYTHONFAULTHANDLER=1)"
  echo "torch gloo: rank 1 named as the suspect by its Python frame and its step"
  expect_none_left 2
fi

# 3. The dump signal kills a program without a handler for it: said so.
cat >"$t/nohandler.py" <<'PY'
import time
print("up", flush=True)
time.sleep(60)
PY
cat >"$t/usr1.toml" <<TOML
[job]
command = ["python3", "$t/nohandler.py", "$marker"]
[watchdog]
stall = "1s"
dump = "SIGUSR1"
dump_timeout = "5s"
TOML
expect_exit 5 timeout -k 5 30 "$DDL" run "$t/usr1.toml" --np 2
expect_contains "$t/err" "ddl: rank 1 on localhost: killed by the dump signal SIGUSR1 (no handler for it); a Python program answers it after \`faulthandler.register(signal.SIGUSR1, all_threads=True)\`"
expect_contains "$t/err" "ddl: rank 0 on localhost: killed by the dump signal SIGUSR1"
expect_none_left 2

# 4. A py-spy that never returns (a test double on PATH): killed at
# dump_timeout; Ctrl-C ends ddl while it runs; kill -9 of ddl leaves nothing.
mkdir "$t/fake-$marker"
cat >"$t/fake-$marker/py-spy" <<'SH'
#!/bin/sh
# test double: a py-spy that never returns, deaf to TERM
trap "" TERM INT HUP
while :; do sleep 0.2; done
SH
chmod +x "$t/fake-$marker/py-spy"
cat >"$t/hung.toml" <<TOML
[job]
command = ["$nap", "600"]
grace = "1s"
[watchdog]
stall = "1s"
dump = "py-spy"
dump_timeout = "3s"
TOML
start=$(date +%s.%N)
expect_exit 5 timeout -k 5 60 env PATH="$t/fake-$marker:$PATH" "$DDL" run "$t/hung.toml" --np 2
took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
echo "hung py-spy: ddl exited after ${took}s (stall 1s + dump_timeout 3s + grace 1s)"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 8)" "$took" || fail "a hung dumper kept ddl ${took}s"
expect_none_left 2

sed -i 's/^dump_timeout = .*/dump_timeout = "60s"/' "$t/hung.toml"
env PATH="$t/fake-$marker:$PATH" "$DDL" run "$t/hung.toml" --np 2 >"$t/out" 2>"$t/err" &
ddl=$!
wait_for "asking every rank" cat "$t/err"
wait_for . pgrep -f -- "fake-$marker/py-spy"  # the dumper reads /proc first: slow on a busy machine
sent=$SECONDS
kill -INT "$ddl"
rc=0; wait "$ddl" || rc=$?
[[ $rc == 130 ]] || { cat "$t/err"; fail "Ctrl-C during a hung dump: exit $rc, want 130"; }
(( SECONDS - sent <= 3 )) || fail "Ctrl-C during a hung dump took $((SECONDS - sent))s"
expect_none_left 2

env PATH="$t/fake-$marker:$PATH" "$DDL" run "$t/hung.toml" --np 2 >"$t/out" 2>"$t/err" &
ddl=$!
wait_for "asking every rank" cat "$t/err"
wait_for . pgrep -f -- "fake-$marker/py-spy"  # the dumper reads /proc first: slow on a busy machine
kill -KILL "$ddl"
wait "$ddl" 2>/dev/null || true
expect_none_left 3

# 5. ptrace refused (kernel.yama.ptrace_scope; a test double of gdb that
# answers as gdb does then, since this host's scope cannot be raised and
# lowered by a test): said so, with the scope.
mkdir "$t/refused-$marker"
cat >"$t/refused-$marker/gdb" <<'SH'
#!/bin/sh
# test double: gdb refused by ptrace_scope, with gdb's words
echo "Could not attach to process.  If your uid matches the uid of the target"
echo "ptrace: Operation not permitted."
exit 1
SH
chmod +x "$t/refused-$marker/gdb"
sed -e 's/^dump = .*/dump = "gdb"/' "$t/hung.toml" >"$t/refused.toml"
sed -i 's/^dump_timeout = .*/dump_timeout = "5s"/' "$t/refused.toml"
expect_exit 5 timeout -k 5 30 env PATH="$t/refused-$marker:$PATH" "$DDL" run "$t/refused.toml" --np 1
grep -qE "ddl: gdb cannot attach to pid [0-9]+ on [^:]+: ptrace refused \(kernel.yama.ptrace_scope = [^)]+\)" "$t/err" ||
  { cat "$t/err"; fail "ptrace refused not reported"; }
expect_none_left 2
