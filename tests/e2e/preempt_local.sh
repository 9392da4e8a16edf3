#!/usr/bin/env bash
# Preemption (issue 17) on local ranks: SIGUSR1/SIGUSR2 to ddl reach every
# rank, SIGTSTP stops them (SIGSTOP) and SIGCONT resumes them; with
# [job] checkpoint_signal, SIGTERM to ddl sends it first and ranks that exit
# 0 within checkpoint_grace end the job with 143 and "checkpointed"; ranks
# that do not get the stop signal after the grace; a rank that exits with
# requeue_exit_code makes ddl exit with it ("requeue").
# ctest: timing
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
command -v python3 >/dev/null || skip "python3 not installed"

wait_for_lines() {
  local file=$1 want=$2 i
  for ((i = 0; i < 200; i++)); do
    [[ -f $file && $(wc -l <"$file") -ge $want ]] && return 0
    sleep 0.05
  done
  fail "$file: fewer than $want lines"
}
start_ddl() {
  timeout -k 5 40 "$DDL" run "$@" >"$t/out" 2>"$t/err" &
  ddl_pid=$!
}
ddl_of() { pgrep -P "$ddl_pid" -x ddl || pgrep -P "$ddl_pid"; }

# A rank that logs USR1 and USR2, and on the checkpoint signal (USR1 when
# argv[2] says so) "saves" and exits with argv[3].
cat >"$t/rank.py" <<'PY'
import os, signal, sys, time
log, mode, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
def note(text):
    with open(log, "a") as f:
        f.write(f"{os.environ['DDL_RANK']} {text}\n")
def on_usr1(signo, frame):
    note("USR1")
    if mode == "checkpoint":
        time.sleep(0.3)
        note("saved")
        sys.exit(code)
signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGUSR2, lambda s, f: note("USR2"))
if mode == "stubborn":
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
note("up")
while True:
    time.sleep(0.05)
PY

# USR1, USR2 forwarded; TSTP stops every rank, CONT resumes them.
start_ddl --np 2 -- python3 "$t/rank.py" "$t/log" plain 0 "$marker"
wait_for_lines "$t/log" 2
pid=$(ddl_of)
kill -USR1 "$pid"; wait_for_lines "$t/log" 4
kill -USR2 "$pid"; wait_for_lines "$t/log" 6
[[ $(grep -c ' USR1$' "$t/log") == 2 && $(grep -c ' USR2$' "$t/log") == 2 ]] || { cat "$t/log"; fail "USR1/USR2 not forwarded to both ranks"; }
kill -TSTP "$pid"; sleep 0.5
ranks=$(pgrep -f -- "^[^ ]*python3 $t/rank.py $t/log plain 0 $marker")
[[ $(wc -w <<<"$ranks") == 2 ]] || fail "expected 2 ranks, found: $ranks"
for r in $ranks; do [[ $(awk '{print $3}' "/proc/$r/stat") == T ]] || fail "rank $r not stopped after SIGTSTP"; done
kill -CONT "$pid"; sleep 0.5
for r in $ranks; do [[ $(awk '{print $3}' "/proc/$r/stat") != T ]] || fail "rank $r still stopped after SIGCONT"; done
kill -INT "$pid"
got=0; wait "$ddl_pid" || got=$?
[[ $got == 130 ]] || fail "after SIGINT: exit $got"
expect_none_left 2

# Checkpoint on SIGTERM: USR1 first, every rank saves and exits 0 in time.
rm -f "$t/log"
cat >"$t/ckpt.toml" <<TOML
[job]
checkpoint_signal = "SIGUSR1"
checkpoint_grace = "10s"
TOML
start_ddl "$t/ckpt.toml" --np 2 -- python3 "$t/rank.py" "$t/log" checkpoint 0 "$marker"
wait_for_lines "$t/log" 2
start=$SECONDS
kill -TERM "$(ddl_of)"
got=0; wait "$ddl_pid" || got=$?
[[ $got == 143 ]] || { cat "$t/err"; fail "checkpoint: exit $got, want 143"; }
(( SECONDS - start < 5 )) || fail "checkpoint: ddl waited out the grace"
[[ $(grep -c ' saved$' "$t/log") == 2 ]] || { cat "$t/log"; fail "not every rank saved"; }
expect_contains "$t/err" "ddl: sent SIGUSR1 (job.checkpoint_signal) to every rank; SIGTERM follows in 10s unless they exit"
expect_contains "$t/err" "ddl: every rank exited within job.checkpoint_grace (10s) after SIGUSR1"
expect_none_left 2

# Ranks that ignore the checkpoint signal get SIGTERM after checkpoint_grace.
rm -f "$t/log"
sed -i 's/"10s"/"2s"/' "$t/ckpt.toml"
start_ddl "$t/ckpt.toml" --np 2 --json -- python3 "$t/rank.py" "$t/log" stubborn 0 "$marker"
wait_for_lines "$t/log" 2
start=$(date +%s.%N)
kill -TERM "$(ddl_of)"
got=0; wait "$ddl_pid" || got=$?
took=$(python3 -c "import time; print(time.time() - $start)")
[[ $got == 143 ]] || fail "stubborn: exit $got, want 143"
python3 -c "assert 1.8 <= $took <= 4.5, $took" || fail "stubborn: stopped after ${took}s, want about 2s"
expect_not_contains "$t/out" '"checkpointed"'
expect_none_left 2

# Requeue: the rank checkpoints and exits 85 = requeue_exit_code; ddl exits 85.
rm -f "$t/log"
cat >>"$t/ckpt.toml" <<TOML
requeue_exit_code = 85
TOML
start_ddl "$t/ckpt.toml" --np 2 --json -- python3 "$t/rank.py" "$t/log" checkpoint 85 "$marker"
wait_for_lines "$t/log" 2
kill -TERM "$(ddl_of)"
got=0; wait "$ddl_pid" || got=$?
[[ $got == 85 ]] || { cat "$t/out" "$t/err"; fail "requeue: exit $got, want 85"; }
expect_contains "$t/out" '"result":"requeue"'
expect_contains "$t/err" "asked to be requeued (exit code 85 = job.requeue_exit_code)"
expect_none_left 2

# A rank that exits 85 by itself: no restart (the scheduler requeues), exit 85.
expect_exit 85 timeout -k 5 30 "$DDL" run "$t/ckpt.toml" --np 1 --max-restarts 3 -- sh -c "exit 85"
expect_not_contains "$t/err" "restarting"
