#!/usr/bin/env bash
# Issue 14: Ctrl-C (130), SIGTERM (143) and --timeout (124) end the phases
# before any rank runs within a second or two, helpers included: a discovery
# script that hangs, and the local GPU probe (a test double of nvidia-smi
# that hangs). `kill -9` of ddl takes the discovery script and what it
# started with it. No rank may start after the stop.
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

now_ms() { date +%s%3N; }

# A discovery script (marked) that says it runs, then hangs in a marked sleep.
script="$t/discover-$marker.sh"
printf '#!/bin/sh\necho $$ >>"%s/running"\n"%s" 30\necho localhost:1\n' "$t" "$nap" >"$script"
chmod +x "$script"
cat >"$t/discover.toml" <<TOML
[job]
command = ["sh", "-c", "touch $t/rank-started"]
[hosts]
discovery_script = "$script"
discovery_timeout = "60s"
TOML

# Test double: nvidia-smi that hangs (marked), on PATH before the real one.
mkdir "$t/bin"
printf '#!/bin/sh\necho $$ >>"%s/running"\nexec "%s" 30\n' "$t" "$nap" >"$t/bin/nvidia-smi"
chmod +x "$t/bin/nvidia-smi"

# start_ddl ARGS...: ddl in the background (bounded), its pid in $ddl_pid,
# once the helper says it runs.
start_ddl() {
  rm -f "$t/running" "$t/rank-started"
  timeout -k 5 40 "$@" >"$t/out" 2>"$t/err" &
  runner=$!
  for _ in $(seq 200); do [[ -s $t/running ]] && break; sleep 0.05; done
  [[ -s $t/running ]] || { cat "$t/err"; fail "the helper did not start: $*"; }
  ddl_pid=$(pgrep -P "$runner" | head -n 1)
}

# finish WANT LIMIT_MS WHAT: waits for ddl; checks its code, the time since
# $t0 and that nothing of the test is left, and that no rank started.
finish() {
  local want=$1 limit=$2 what=$3 rc=0
  wait "$runner" || rc=$?
  local took=$(($(now_ms) - t0))
  [[ $rc == "$want" ]] || { cat "$t/err"; fail "$what: exit $rc, want $want"; }
  ((took < limit)) || fail "$what: took ${took}ms, limit ${limit}ms"
  [[ ! -e $t/rank-started ]] || fail "$what: a rank started after the stop"
  expect_none_left 2
  echo "ok: $what -> $rc in ${took}ms"
}

for sig in INT TERM; do
  want=130; [[ $sig == TERM ]] && want=143
  start_ddl "$DDL" run "$t/discover.toml"
  t0=$(now_ms); kill -s "$sig" "$ddl_pid"
  finish "$want" 2000 "SIG$sig during the discovery script"
  expect_contains "$t/err" "while running the discovery script"
done

t0=$(now_ms)
start_ddl "$DDL" run "$t/discover.toml" --timeout 1s
finish 124 3000 "--timeout 1s during the discovery script"
expect_contains "$t/err" "timed out after 1s"

# kill -9 of ddl: the script and its sleep die with it (PDEATHSIG, lifeline).
start_ddl "$DDL" run "$t/discover.toml"
kill -KILL "$ddl_pid"
wait "$runner" 2>/dev/null || true
expect_none_left 2
echo "ok: kill -9 of ddl during the discovery script left nothing"

# The local GPU probe (no host source: nvidia-smi counts the slots).
for sig in INT TERM; do
  want=130; [[ $sig == TERM ]] && want=143
  start_ddl env PATH="$t/bin:$PATH" "$DDL" run -- sh -c "touch $t/rank-started"
  t0=$(now_ms); kill -s "$sig" "$ddl_pid"
  finish "$want" 2000 "SIG$sig during the local GPU probe"
  expect_contains "$t/err" "while probing the local GPUs"
done

t0=$(now_ms)
start_ddl env PATH="$t/bin:$PATH" "$DDL" run --timeout 1s -- sh -c "touch $t/rank-started"
finish 124 3000 "--timeout 1s during the local GPU probe"
