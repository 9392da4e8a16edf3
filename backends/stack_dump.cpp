// SPDX-License-Identifier: MIT
#include "backends/stack_dump.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace ddl {

namespace {

constexpr std::string_view k_script = R"DUMP(rank=$1 tool=${2:-auto} secs=${3:-30}
h=$(uname -n 2>/dev/null)
have() { command -v "$1" >/dev/null 2>&1; }
if have timeout && timeout --foreground -s KILL 5 true 2>/dev/null; then bound="timeout --foreground -s KILL $secs"
else bound=; fi
# readstat PID: st_comm (its first line), st_ppid and st_pgrp from
# /proc/PID/stat, read after the LAST ")": the name between the parentheses
# is chosen by the process itself (PR_SET_NAME), blanks, ")" and newlines too.
readstat() {
  st_first= st_last=
  { IFS= read -r st_first || return 1
    st_last=$st_first
    while IFS= read -r l; do st_last=$l; done; } 2>/dev/null <"/proc/$1/stat" || return 1
  st_rest=${st_last##*\)}
  [ "$st_rest" != "$st_last" ] || return 1
  set -- $st_rest
  st_ppid=$2 st_pgrp=$3
  st_comm=${st_first#*\(}
}
uidof() { sed -n "s/^Uid:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null; }
# The ranks run as the user this script runs as: their uid is taken from
# here, never from the pid named (it may have ended and been reused by
# a process of another user), nor from a process that claims to be a worker.
me=$(uidof $$)
# ours PID: whether PID is in the process group of the rank ($g) and runs as
# its user ($u); asked again just before each dump or signal (pids are reused).
ours() { readstat "$1" && [ "$st_pgrp" = "$g" ] && [ -n "$u" ] && [ "$(uidof "$1")" = "$u" ]; }
gone() { echo "ddl: no stack dump of pid $1 on $h: it has ended or left the process group of the rank"; }
pyprocs() {
  for s in /proc/[0-9]*/stat; do
    q=${s#/proc/}; q=${q%/stat}
    readstat "$q" || continue
    [ "$st_pgrp" = "$g" ] || continue
    case $st_comm in python*) ours "$q" && echo "$q" ;; esac
  done
}
refused() {
  scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)
  echo "ddl: $1 cannot attach to pid $target on $h: ptrace refused (kernel.yama.ptrace_scope = ${scope:-absent}); run the ranks as a user that may trace them (ptrace_scope 0 or 1) or set watchdog.dump to a signal the program answers with its stacks"
}
pyspy() {
  ours "$target" || { gone "$target"; return 1; }
  out=$($bound py-spy dump --pid "$target" 2>&1); rc=$?
  case $out in *"ermission denied"*|*"peration not permitted"*) refused py-spy; return 1 ;; esac
  printf "ddl: stacks of pid %s on %s by py-spy:\n%s\n" "$target" "$h" "$out"
  return $rc
}
pyext() {
  e=$(readlink -f "/proc/$target/exe" 2>/dev/null)
  for f in "/usr/share/gdb/auto-load$e-gdb.py" /usr/share/gdb/auto-load/usr/lib/*/libpython3*-gdb.py; do
    [ -e "$f" ] && return 0
  done
  return 1
}
gdbdump() {
  ours "$target" || { gone "$target"; return 1; }
  pybt=
  [ -n "$py" ] && pybt="thread apply all py-bt"
  out=$($bound gdb -p "$target" -batch -nx -q -ex "set pagination off" -ex "thread apply all bt" ${pybt:+-ex "$pybt"} 2>&1)
  case $out in *"ptrace: Operation not permitted"*|*"ptrace: Permission denied"*) refused gdb; return 1 ;; esac
  frames=$(printf "%s\n" "$out" | while IFS= read -r l; do
    case $l in "Thread "*|"#"[0-9]*|"Traceback "*|"  File "*|"    "*) printf "%s\n" "$l" ;; esac
  done)
  if [ -z "$frames" ]; then
    echo "ddl: gdb gave no stack of pid $target on $h: $(printf "%s\n" "$out" | tail -n 1)"
    return 1
  fi
  printf "ddl: stacks of pid %s on %s by gdb:\n%s\n" "$target" "$h" "$frames"
}
# missing: why neither py-spy nor gdb gave the stacks of a Python rank.
missing() {
  if have py-spy; then w="py-spy failed"; else w="py-spy is not installed"; fi
  if ! have gdb; then echo "$w, gdb is not installed"
  elif pyext; then echo "$w, gdb failed"
  else echo "$w, gdb has no Python support there (install python3-dbg for its py-bt)"; fi
}
faulthandler() {
  for q in $py; do
    if ! ours "$q"; then gone "$q"
    elif tr "\0" "\n" <"/proc/$q/environ" 2>/dev/null | grep -q "^PYTHONFAULTHANDLER=." && ours "$q"; then
      echo "ddl: stacks of pid $q on $h by faulthandler (SIGABRT; PYTHONFAULTHANDLER=1)"
      kill -s ABRT "$q" 2>/dev/null
    else
      echo "ddl: no stack dump of pid $q on $h: $(missing) and it runs without PYTHONFAULTHANDLER=1"
    fi
  done
}
dumpone() {
  p=$1
  readstat "$p" || { gone "$p"; return 0; }
  g=$st_pgrp u=$me
  if [ -z "$u" ] || [ "$(uidof "$p")" != "$u" ]; then
    echo "ddl: no stack dump of pid $p on $h: it runs as another user than the ranks (it has ended and its pid was reused)"
    return 0
  fi
  py=$(pyprocs)
  target=$p
  for q in $py; do target=$q; break; done
  case $tool in
    py-spy)
      if have py-spy; then pyspy; return 0; fi
      echo "ddl: py-spy is not installed on $h; no stack dump of pid $target (install py-spy, or set watchdog.dump = \"auto\")"
      return 0 ;;
    gdb)
      if have gdb; then gdbdump; return 0; fi
      echo "ddl: gdb is not installed on $h; no stack dump of pid $target (install gdb, or set watchdog.dump = \"auto\")"
      return 0 ;;
  esac
  if [ -n "$py" ] && have py-spy && pyspy; then return 0; fi
  if have gdb && { [ -z "$py" ] || pyext; } && gdbdump; then return 0; fi
  if [ -n "$py" ]; then faulthandler; return 0; fi
  echo "ddl: no stack dump of pid $p on $h: install gdb there (py-spy too for Python ranks), or set watchdog.dump to a signal the program answers with its stacks"
}
children() {
  for s in /proc/[0-9]*/stat; do
    q=${s#/proc/}; q=${q%/stat}
    readstat "$q" && [ "$st_ppid" = "$1" ] && echo "$q"
  done
}
isworker() {
  [ -n "$me" ] && [ "$(uidof "$1")" = "$me" ] && tr "\0" " " <"/proc/$1/cmdline" 2>/dev/null | grep -q " worker pmix-host "
}
# ranked RENDEZVOUS: under a launcher (mpirun), $rank is the rank number of
# the job whose ranks have DDL_RENDEZVOUS=RENDEZVOUS. Its program is the
# child of the rank script (sh -c SCRIPT ddl-rank PROGRAM..., a child of
# the launcher or its daemon; not the watchdog of the script, a subshell of
# it, whose parent is the script) with DDL_RANK=$rank, of this user.
envhas() { tr "\0" "\n" <"/proc/$1/environ" 2>/dev/null | grep -qxF -- "$2"; }
isrankscript() { tr "\0" "\n" <"/proc/$1/cmdline" 2>/dev/null | grep -qx ddl-rank; }
ranked() {
  for s in /proc/[0-9]*/stat; do
    p=${s#/proc/}; p=${p%/stat}
    readstat "$p" || continue
    case $st_comm in "sh) "*) ;; *) continue ;; esac
    readstat "$st_ppid" || continue
    case $st_comm in "sh) "*) continue ;; esac
    isrankscript "$p" && envhas "$p" "DDL_RENDEZVOUS=$1" || continue
    for q in $(children "$p"); do
      [ -n "$me" ] && [ "$(uidof "$q")" = "$me" ] && ! isrankscript "$q" && envhas "$q" "DDL_RANK=$rank" && echo "$q"
    done
  done
}
if [ -n "${4:-}" ]; then
  pid=$(ranked "$4")
  if [ -z "$pid" ]; then
    echo "ddl: no stack dump of rank $rank on $h: no process of the job runs it there (it has ended)"
    exit 0
  fi
  set -- $pid
  rank=$1
fi
worker=
if isworker "$rank"; then worker=$rank; else
  for q in $(children "$rank"); do isworker "$q" && worker=$q; done
fi
if [ -z "$worker" ]; then dumpone "$rank"; exit 0; fi
all=
for q in $(children "$worker"); do
  r=$(tr "\0" "\n" <"/proc/$q/environ" 2>/dev/null | sed -n "s/^PMIX_RANK=//p")
  [ -n "$r" ] || continue
  all="$all$(printf "ddl: MPI rank %s (pid %s) on %s:\n" "$r" "$q" "$h"; dumpone "$q")
"
done
printf "%s" "${all:-ddl: no MPI rank runs under the worker pid $worker on $h
}"
)DUMP";

} // namespace

std::string_view stack_dump_script() { return k_script; }

long dump_seconds(Millis timeout) { return std::max<long>(1, static_cast<long>((timeout.count() + 999) / 1000)); }

std::string stack_dump_line(DumpTool tool, Millis timeout) {
  return fmt::format("dump {} {}\n", dump_tool_name(tool), dump_seconds(timeout));
}

} // namespace ddl
