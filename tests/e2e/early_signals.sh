#!/usr/bin/env bash
# A SIGINT or SIGTERM that reaches ddl at any moment once its own code runs,
# the very first instant included, ends the job: exit 130 (143), within
# seconds, nothing left running. A background job of a script starts with
# SIGINT ignored, so one that came before ddl had installed its handler was
# lost and ddl ran on. ddl now blocks these signals in its first code (before
# any initializer or thread) and takes them once its handlers are in place.
# (Before that first code, while the dynamic loader runs, nothing of ddl's
# can act: an ignored signal is dropped by the kernel there.) (issue 27, item 12)
# Under load too (issue 40, item 11).
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
have cc gcc || skip "no C compiler for the preloaded signal sender"

# A TEST DOUBLE of "a signal at the first instant": a preloaded library whose
# constructor, which runs after the executable's first code and before its
# main, sends the signal named by DDL_TEST_EARLY_SIGNAL to the process.
cat >"$t/early.c" <<'C'
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void send_early(void) {
  const char* signo = getenv("DDL_TEST_EARLY_SIGNAL");
  unsetenv("LD_PRELOAD");  /* the ranks are not ddl */
  if (signo != NULL) {
    unsetenv("DDL_TEST_EARLY_SIGNAL");
    kill(getpid(), atoi(signo));
  }
}
C
cc -shared -fPIC -o "$t/early.so" "$t/early.c"

# ended_within PID SECONDS: true once PID has exited.
ended_within() {
  local i
  for ((i = 0; i < $2 * 20; i++)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
  return 1
}

# finish PID WANT WHAT: exit WANT within 5 s, nothing left.
finish() {
  local got=0
  if ! ended_within "$1" 5; then
    kill -KILL "$1"; wait "$1" 2>/dev/null || true
    cleanup_marked
    fail "$3 was lost: ddl still ran 5 s later"
  fi
  wait "$1" || got=$?
  [[ $got == "$2" ]] || { cat "$t/err"; fail "$3: exit $got, want $2"; }
  expect_none_left 2
}

# 1. At ddl's first instant.
for sig in INT:2:130 TERM:15:143; do
  IFS=: read -r name number want <<<"$sig"
  env LD_PRELOAD="$t/early.so" DDL_TEST_EARLY_SIGNAL=$number "$DDL" run -H localhost:2 -- "$nap" 30 \
    >"$t/out" 2>"$t/err" &
  finish $! "$want" "SIG$name at ddl's first instant"
done

# holds_or_catches PID SIGNO: ddl's main thread blocks or catches it (its code runs).
holds_or_catches() {
  local blk cgt
  [[ $(readlink "/proc/$1/exe" 2>/dev/null) == "$ddl_exe" ]] || return 1
  blk=$(awk '/^SigBlk:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  cgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  [[ -n $blk && -n $cgt ]] && (((0x$blk | 0x$cgt) & (1 << ($2 - 1))))
}

ddl_exe=$(readlink -f "$DDL")
# 2. Every moment after that: right away, then a few milliseconds on.
for delay in 0 0.001 0.002 0.003 0.005 0.008 0.01 0.015 0.02 0.03 0.05 0.1 0.2 0.5; do
  for sig in INT:2:130 TERM:15:143; do
    IFS=: read -r name number want <<<"$sig"
    "$DDL" run -H localhost:2 -- "$nap" 30 >"$t/out" 2>"$t/err" &
    ddl=$!
    until holds_or_catches $ddl "$number"; do kill -0 $ddl 2>/dev/null || break; done
    sleep "$delay"
    kill "-$name" $ddl 2>/dev/null || true
    finish $ddl "$want" "SIG$name ${delay}s after ddl held it"
  done
done

# 3. Under load (6 busy loops): a SIGINT 5 to 30 ms after the start, whatever
# ddl is doing then, ends it with 130 every time (issue 40, item 11: 4 of 8
# were lost at load 6). Job control is on (set -m), so the background ddl
# does not start with SIGINT ignored: before ddl's first instruction, where
# no code of ddl's can act, the kernel's default action ends it with 130
# too (an ignored signal is dropped there, see the man page); from then on
# ddl must take it.
busy=()
trap 'rc=$?; ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null; rm -rf "$t"; exit $rc' EXIT
for _ in 1 2 3 4 5 6; do
  (while :; do :; done) &
  busy+=($!)
done
set -m
for delay in 0.005 0.01 0.015 0.02 0.025 0.03; do
  "$DDL" run -H localhost:2 -- "$nap" 30 >"$t/out" 2>"$t/err" &
  ddl=$!
  sleep "$delay"
  kill -INT $ddl 2>/dev/null || true
  finish $ddl 130 "SIGINT ${delay}s after the start, under load"
done
set +m
kill "${busy[@]}"
busy=()
echo ok
