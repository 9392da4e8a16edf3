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
pyprocs() {
  read -r _ _ _ _ g _ 2>/dev/null <"/proc/$p/stat" || return 0
  for s in /proc/[0-9]*/stat; do
    read -r q c _ _ gg _ 2>/dev/null <"$s" || continue
    [ "$gg" = "$g" ] || continue
    case $c in "(python"*) echo "$q" ;; esac
  done
}
refused() {
  scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)
  echo "ddl: $1 cannot attach to pid $target on $h: ptrace refused (kernel.yama.ptrace_scope = ${scope:-absent}); run the ranks as a user that may trace them (ptrace_scope 0 or 1) or set watchdog.dump to a signal the program answers with its stacks"
}
pyspy() {
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
faulthandler() {
  for q in $py; do
    if tr "\0" "\n" <"/proc/$q/environ" 2>/dev/null | grep -q "^PYTHONFAULTHANDLER=."; then
      echo "ddl: stacks of pid $q on $h by faulthandler (SIGABRT; PYTHONFAULTHANDLER=1)"
      kill -s ABRT "$q" 2>/dev/null
    else
      echo "ddl: no stack dump of pid $q on $h: py-spy and gdb are not installed there and it runs without PYTHONFAULTHANDLER=1"
    fi
  done
}
dumpone() {
  p=$1
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
    read -r q _ _ pp _ 2>/dev/null <"$s" || continue
    [ "$pp" = "$1" ] && echo "$q"
  done
}
isworker() { tr "\0" " " <"/proc/$1/cmdline" 2>/dev/null | grep -q " worker pmix-host "; }
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
