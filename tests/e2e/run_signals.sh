#!/usr/bin/env bash
# Signals: SIGINT/SIGTERM to ddl are forwarded (130/143) and nothing is left;
# a second SIGINT within a second kills at once; `kill -9` of ddl leaves no
# worker; `ddl ... | head -1` (SIGPIPE) still stops the ranks.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"

# wait_for_file FILE: until the ranks are up (bounded).
wait_for_lines() {
  local file=$1 want=$2 i
  for ((i = 0; i < 100; i++)); do
    [[ -f $file && $(wc -l <"$file") -ge $want ]] && return 0
    sleep 0.05
  done
  fail "ranks did not start"
}

# start_ddl ARGS...: runs ddl in the background; its pid in $ddl_pid.
start_ddl() {
  rm -f "$t/up"
  timeout -k 5 30 "$DDL" run "$@" >"$t/out" 2>"$t/err" &
  ddl_pid=$!
}
# The timeout wrapper's child is ddl itself.
ddl_of() { pgrep -P "$ddl_pid" -x ddl || pgrep -P "$ddl_pid"; }

rank_script="echo up >>$t/up; $nap 60; true"

for sig in INT TERM; do
  start_ddl --np 3 -- sh -c "$rank_script"
  wait_for_lines "$t/up" 3
  kill -s $sig "$(ddl_of)"
  got=0; wait "$ddl_pid" || got=$?
  want=130; [[ $sig == TERM ]] && want=143
  [[ $got == "$want" ]] || { cat "$t/err"; fail "SIG$sig: exit $got, want $want"; }
  expect_none_left 2
done

# Ranks that ignore INT and TERM; grace 30s; two SIGINTs kill at once.
cat >"$t/job.toml" <<TOML
[job]
grace = "30s"
TOML
start_ddl "$t/job.toml" --np 2 -- sh -c "trap '' INT TERM; echo up >>$t/up; while :; do $nap 0.1; done"
wait_for_lines "$t/up" 2
pid=$(ddl_of)
start=$SECONDS
kill -INT "$pid"; sleep 0.2; kill -INT "$pid"
got=0; wait "$ddl_pid" || got=$?
[[ $got == 130 ]] || fail "double SIGINT: exit $got"
(( SECONDS - start < 5 )) || fail "double SIGINT did not kill at once"
expect_none_left 2

# kill -9 of ddl: the lifeline and PDEATHSIG end every worker, grandchildren too.
start_ddl --np 3 -- sh -c "$rank_script"
wait_for_lines "$t/up" 3
kill -KILL "$(ddl_of)"
wait "$ddl_pid" || true
expect_none_left 2

# A closed stdout: ddl stops the ranks and exits 141 (128+SIGPIPE).
set +o pipefail
timeout -k 5 30 "$DDL" run --np 2 -- sh -c "while :; do echo line; $nap 0.01; done" 2>"$t/err" | head -1 >"$t/first"
codes=("${PIPESTATUS[@]}")
set -o pipefail
[[ $(cat "$t/first") =~ ^\[[01]\]\ line$ ]] || fail "head did not get a tagged line"
[[ ${codes[0]} == 141 ]] || { cat "$t/err"; fail "ddl | head -1: exit ${codes[0]}, want 141"; }
expect_none_left 2
