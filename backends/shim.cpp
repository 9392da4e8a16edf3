// SPDX-License-Identifier: MIT
#include "backends/shim.hpp"

#include <algorithm>
#include <csignal>
#include <iterator>
#include <utility>

#include <fmt/core.h>

#include "backends/stack_dump.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

// The program every remote rank runs under (`sh -c SHIM`). It holds no single
// quote, so that it can be single-quoted for any login shell. First answers
// any probe requests (shim_probe_request: its protocol version checked, the
// script's output sent back as marker lines on stderr) and exec requests
// (shim_exec_request: run in the shim's own shell, which they may replace),
// then reads a
// length-prefixed payload (shim_payload) from stdin, then starts the command
// in a new session and watches stdin: "in N" frames carry N bytes for the
// command's stdin (a FIFO, with __ddl_in; "ineof" closes it; a host without
// mktemp or mkfifo gives it /dev/null), control lines signal the group, EOF or
// "stop" ends it (TERM, grace, KILL), and so does the launcher's silence: with
// a heartbeat period, a ticker counts periods, a "beat" line resets the count,
// and __ddl_hbn periods without one end the group as EOF would (a host cut
// off from the launcher never sees EOF). Background helpers close fds 3-5
// (the channel), so that a sleeping one never holds it open. The ticker runs
// in a session of its own where setsid exists, so that TERM to its group
// ends its sleep at once: a trap in a subshell can miss a TERM that lands
// before its `wait`, and the rank's end then waited out a whole period. Exits with the command's status, or dies
// by the same signal, with core dumps off, so that sshd reports exit-signal.
// dash ignores SIGINT in background jobs for good, so the command runs in the
// foreground of a pipeline whose other side is the watcher. The helper that
// sends KILL after grace runs in a session of its own too, ended as a group,
// for the same reason (a shim whose rank died from TERM otherwise waited out
// the whole grace before it exited).
constexpr std::string_view k_script = R"SHIM(__ddl_ss=
for __ddl_x in /usr/bin /bin /usr/sbin /sbin; do
  if [ -x "$__ddl_x/setsid" ]; then __ddl_ss=$__ddl_x/setsid; break; fi
done
if [ -z "$__ddl_ss" ] && command -v setsid >/dev/null 2>&1; then __ddl_ss=setsid; fi
while read -r __ddl_n || exit 125; do
  case $__ddl_n in "probe "*|"exec "*) ;; *) break ;; esac
  set -- $__ddl_n
  [ "$2" = "$__ddl_pv" ] || { echo "ddl-shim: protocol $__ddl_pv" >&2; exit 125; }
  case $3 in *[!0-9]*|"") exit 125 ;; esac
  __ddl_pl=$(dd bs=1 count="$3" 2>/dev/null) || exit 125
  if [ "$1" = exec ]; then
    eval "$__ddl_pl"
    echo "ddl-shim: answered $?" >&2
    continue
  fi
  { ( eval "$__ddl_pl" ) </dev/null 2>&1; printf "\nddl-shim-status %s\n" "$?"; } |
    while IFS= read -r __ddl_l; do
      case $__ddl_l in
        "ddl-shim-status "*) echo "ddl-shim: answered ${__ddl_l#ddl-shim-status }" ;;
        *) printf "ddl-shim: a %s\n" "$__ddl_l" ;;
      esac
    done >&2
done
case $__ddl_n in
  "check "*)
    __ddl_n=${__ddl_n#check }
    case $__ddl_n in *[!0-9]*|"") exit 125 ;; esac
    __ddl_pl=$(dd bs=1 count="$__ddl_n" 2>/dev/null) || exit 125
    eval "$__ddl_pl" || exit 125
    (cd -- "$__ddl_dir") 2>/dev/null || exit 126
    command -v "$__ddl_prog" >/dev/null 2>&1 || exit 127
    echo "ddl-shim: ready" >&2
    read -r __ddl_n || exit 0 ;;
esac
case $__ddl_n in *[!0-9]*|"") exit 125 ;; esac
__ddl_pl=$(dd bs=1 count="$__ddl_n" 2>/dev/null) || exit 125
eval "$__ddl_pl" || exit 125
exec 3<&0 4>&1 5>&2 </dev/null
__ddl_c= __ddl_fi=
if [ -n "${__ddl_in:-}" ]; then
  __ddl_td=$(mktemp -d 2>/dev/null) || __ddl_td=
  if [ -n "$__ddl_td" ] && mkfifo -m 600 "$__ddl_td/in" 2>/dev/null; then __ddl_fi=$__ddl_td/in
  elif [ -n "$__ddl_td" ]; then rmdir "$__ddl_td" 2>/dev/null; fi
fi
__ddl_nap() {
  sleep "$1" 2>/dev/null & wait $! && return 0
  sleep 1 & wait $!
}
__ddl_end() { kill $! 2>/dev/null; wait; exit 0; }
__ddl_tk() { kill -s TERM -- "-$1" 2>/dev/null || kill -s TERM "$1" 2>/dev/null; }
{
  {
    [ -n "$__ddl_fi" ] && exec 6>"$__ddl_fi"
    while read -r __ddl_l <&3; do
      case $__ddl_l in
        "in "*) dd bs=1 count="${__ddl_l#in }" <&3 2>/dev/null | { [ -n "$__ddl_fi" ] && cat >&6 || cat >/dev/null; } ;;
        ineof) [ -n "$__ddl_fi" ] && exec 6>&-; __ddl_fi= ;;
        *) echo "ctl $__ddl_l" ;;
      esac
    done; echo eof; } 2>/dev/null &
  echo "fwd $!"
  if [ "${__ddl_hb:-0}" != 0 ]; then
    if [ -n "$__ddl_ss" ]; then
      $__ddl_ss sh -c "while sleep $__ddl_hb 2>/dev/null || sleep 1; do echo tick; done" </dev/null 2>/dev/null 3<&- 4>&- 5>&- &
    else
      { trap __ddl_end TERM; while __ddl_nap "$__ddl_hb"; do echo tick; done; } </dev/null 2>/dev/null 3<&- 4>&- 5>&- &
    fi
    __ddl_c=$!
    echo "tck $__ddl_c"
  fi
  (
    read -r __ddl_me __ddl_x </proc/self/stat 2>/dev/null || __ddl_me=$(exec sh -c "echo \$PPID")
    echo "pid $__ddl_me"
    exec 3<&- >&4 4>&- 2>&5 5>&-
    if [ -n "$__ddl_fi" ]; then exec <"$__ddl_fi"; rm -f "$__ddl_fi"; rmdir "${__ddl_fi%/in}"; fi
    echo "ddl-shim: pid $__ddl_me" >&2
    cd -- "$__ddl_dir" || exit 126
    __ddl_env
    exec $__ddl_ss "$@"
  )
  echo "exit $?"
  [ -n "$__ddl_c" ] && __ddl_tk "$__ddl_c" && wait "$__ddl_c"
} 2>/dev/null | {
  __ddl_t= __ddl_q= __ddl_f= __ddl_k= __ddl_c= __ddl_d= __ddl_m=0
  __ddl_sig() {
    kill -s "$1" -- "$__ddl_t" 2>/dev/null || kill -s "$1" "$__ddl_p" 2>/dev/null
  }
  __ddl_stop() {
    [ -n "$__ddl_k" ] && return
    __ddl_sig TERM
    if [ -n "$__ddl_ss" ]; then
      $__ddl_ss sh -c "sleep $__ddl_grace 2>/dev/null || sleep 1; kill -s KILL -- $__ddl_t 2>/dev/null || kill -s KILL $__ddl_p 2>/dev/null" </dev/null >/dev/null 2>&1 3<&- 4>&- 5>&- &
    else
      { trap __ddl_end TERM; __ddl_nap "$__ddl_grace"; __ddl_sig KILL; } </dev/null >/dev/null 2>&1 3<&- 4>&- 5>&- &
    fi
    __ddl_k=$!
  }
  __ddl_act() {
    case $1 in
      stop|eof) __ddl_stop ;;
      HUP|INT|QUIT|TERM|KILL|USR1|USR2|CONT|STOP|TSTP) __ddl_sig "$1" ;;
      dump*) set -- $1
        $__ddl_ss sh -c "$__ddl_ds" sh "$__ddl_p" "${2:-auto}" "${3:-30}" </dev/null >&2 2>&1 3<&- 4>&- 5>&- &
        __ddl_d=$! ;;
    esac
  }
  while read -r __ddl_w __ddl_a; do
    case $__ddl_w in
      fwd) __ddl_f=$__ddl_a ;;
      tck) __ddl_c=$__ddl_a ;;
      tick) __ddl_m=$((__ddl_m + 1))
           if [ "$__ddl_m" -ge "$__ddl_hbn" ]; then
             if [ -n "$__ddl_t" ]; then __ddl_stop; else __ddl_q="$__ddl_q stop"; fi
           fi ;;
      pid) __ddl_p=$__ddl_a
           if [ -n "$__ddl_ss" ]; then __ddl_t=-$__ddl_a; else __ddl_t=$__ddl_a; fi
           for __ddl_x in $__ddl_q; do __ddl_act "$__ddl_x"; done ;;
      ctl|eof) __ddl_x=${__ddl_a:-eof}
           if [ "$__ddl_x" = beat ]; then __ddl_m=0
           elif [ -n "$__ddl_t" ]; then __ddl_act "$__ddl_x"; else __ddl_q="$__ddl_q $__ddl_x"; fi ;;
      exit)
        [ -n "$__ddl_d" ] && { kill -s KILL -- "-$__ddl_d" 2>/dev/null || kill -s KILL "$__ddl_d" 2>/dev/null; }
        [ -n "$__ddl_k" ] && __ddl_tk "$__ddl_k" && wait "$__ddl_k"
        [ -n "$__ddl_f" ] && kill "$__ddl_f" 2>/dev/null
        [ -n "$__ddl_c" ] && __ddl_tk "$__ddl_c"
        if [ -n "$__ddl_ss" ] && kill -s 0 -- "$__ddl_t" 2>/dev/null; then
          kill -s TERM -- "$__ddl_t" 2>/dev/null
          for __ddl_x in 1 2 3 4 5 6 7 8 9 10; do
            kill -s 0 -- "$__ddl_t" 2>/dev/null || break
            sleep 0.1 2>/dev/null || sleep 1
          done
          kill -s KILL -- "$__ddl_t" 2>/dev/null
        fi
        exit "$__ddl_a" ;;
    esac
  done
  exit 125
}
__ddl_st=$?
if [ "$__ddl_st" -gt 128 ]; then
  __ddl_x=$(kill -l "$__ddl_st" 2>/dev/null)
  case $__ddl_x in
    HUP|INT|QUIT|ILL|TRAP|ABRT|BUS|FPE|KILL|USR1|SEGV|USR2|PIPE|ALRM|TERM)
      trap - "$__ddl_x"; ulimit -c 0 2>/dev/null; kill -s "$__ddl_x" $$ ;;
  esac
fi
exit "$__ddl_st"
)SHIM";

constexpr std::string_view k_marker = "ddl-shim: ";

bool valid_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) {
    return false;
  }
  for (char c : name) {
    bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!ok) {
      return false;
    }
  }
  return true;
}

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

// sleep(1) operand: whole seconds, or a decimal fraction (GNU, BusyBox, BSD).
std::string seconds_text(Millis grace) {
  long long ms = std::max<long long>(0, grace.count());
  if (ms % 1000 == 0) {
    return fmt::format("{}", ms / 1000);
  }
  return fmt::format("{}.{:03}", ms / 1000, ms % 1000);
}

// The signals a rank's control line may name (the shim's `kill -s NAME`).
constexpr int k_forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2, SIGTERM, SIGCONT, SIGSTOP, SIGTSTP};

} // namespace

// The stack dumper (a "dump" line runs it in a session of its own, killed
// with the rank), then the shim.
std::string_view shim_script() {
  static const std::string script =
      fmt::format("__ddl_pv={}\n__ddl_ds=$(cat <<\"__DDL_DUMP__\"\n{}\n__DDL_DUMP__\n)\n{}", k_shim_protocol,
                  stack_dump_script(), k_script);
  return script;
}

std::string shim_ssh_command() { return fmt::format("exec sh -c '{}'", shim_script()); }

Result<std::string> shim_check_payload(const std::string& workdir, const std::string& program) {
  if (has_nul(workdir) || has_nul(program)) {
    return fail(ExitCode::usage, "the workdir or the command holds a NUL byte");
  }
  std::string body = "__ddl_dir=" + shell_quote(workdir.empty() ? "." : workdir) + "\n__ddl_prog=" +
                     shell_quote(program) + "\n";
  return fmt::format("check {}\n{}", body.size(), body);
}

namespace {

Result<std::string> shim_request(std::string_view kind, std::string_view script, const std::vector<std::string>& args) {
  std::string body = "set --";
  for (const auto& arg : args) {
    if (has_nul(arg)) {
      return fail(ExitCode::usage, fmt::format("an argument of a shim {} request holds a NUL byte", kind));
    }
    body += " " + shell_quote(arg);
  }
  body += "\n";
  body += script;
  return fmt::format("{} {} {}\n{}", kind, k_shim_protocol, body.size(), body);
}

} // namespace

Result<std::string> shim_probe_request(std::string_view script, const std::vector<std::string>& args) {
  return shim_request("probe", script, args);
}

Result<std::string> shim_exec_request(std::string_view script, const std::vector<std::string>& args) {
  return shim_request("exec", script, args);
}

Result<std::string> shim_payload(const ShimJob& job) {
  if (job.argv.empty()) {
    return fail(ExitCode::usage, "no command to run");
  }
  std::string problems;
  std::string body;
  body += "__ddl_dir=" + shell_quote(job.workdir.empty() ? "." : job.workdir) + "\n";
  if (has_nul(job.workdir)) {
    problems += "the workdir holds a NUL byte\n";
  }
  body += "__ddl_grace=" + seconds_text(job.grace) + "\n";
  body += fmt::format("__ddl_hb={}\n__ddl_hbn={}\n__ddl_in={}\n", seconds_text(job.heartbeat),
                      k_shim_heartbeat_misses, job.reads_stdin ? "1" : "");
  body += "__ddl_env() {\n";
  for (const auto& [name, value] : job.env) {
    if (!valid_env_name(name)) {
      problems += fmt::format("invalid environment variable name '{}'\n", name);
    } else if (has_nul(value)) {
      problems += fmt::format("environment variable {} holds a NUL byte\n", name);
    }
    body += "export " + name + "=" + shell_quote(value) + "\n";
  }
  body += ":\n}\nset --";
  for (const auto& word : job.argv) {
    if (has_nul(word)) {
      problems += "a command argument holds a NUL byte\n";
    }
    body += " " + shell_quote(word);
  }
  body += "\n";
  if (!problems.empty()) {
    problems.pop_back();
    return fail(ExitCode::usage, problems);
  }
  return fmt::format("{}\n{}", body.size(), body);
}

std::string shim_stdin_frame(std::string_view bytes) { return fmt::format("in {}\n{}", bytes.size(), bytes); }

std::optional<std::string> shim_signal_line(int signo) {
  if (std::ranges::find(k_forwarded, signo) == std::end(k_forwarded)) {
    return std::nullopt;
  }
  return fmt::format("{}\n", signal_abbrev(signo));
}

// Until the pid line, stderr comes from the login shell (a .bashrc may
// print there) and the shim: marker lines are taken out wherever they are,
// other lines pass. The command starts only after the pid line.
std::string ShimStderr::feed(std::string_view bytes) {
  if (decided_) {
    return std::string(bytes);
  }
  head_.append(bytes);
  std::string passed;
  while (true) {
    std::size_t newline = head_.find('\n');
    if (newline == std::string::npos) {
      if (head_.size() > 4096) {  // a long line without newline: not a marker
        passed += std::exchange(head_, {});
      }
      return passed;
    }
    std::string_view line = std::string_view(head_).substr(0, newline);
    if (line.starts_with(k_marker)) {
      std::string_view what = line.substr(k_marker.size());
      if (take_probe_marker(what)) {
        head_.erase(0, newline + 1);
        continue;
      }
      if (what.starts_with("pid ")) {
        if (auto value = parse_int(what.substr(4))) {
          pid_ = static_cast<long>(*value);
          head_.erase(0, newline + 1);
          decided_ = true;
          return passed + std::exchange(head_, {});
        }
      }
    }
    passed.append(head_, 0, newline + 1);
    head_.erase(0, newline + 1);
  }
}

bool ShimStderr::take_probe_marker(std::string_view what) {
  if (what == "ready") {
    ready_ = true;
  } else if (what.starts_with("a ")) {
    answer_.append(what.substr(2));
    answer_ += '\n';
  } else if (what.starts_with("answered ")) {
    answered_ = static_cast<int>(parse_int(what.substr(9)).value_or(-1));
  } else if (what.starts_with("protocol ")) {
    protocol_ = std::string(what.substr(9));
  } else {
    return false;
  }
  return true;
}

ShimAnswer ShimStderr::take_answer() {
  ShimAnswer answer{answered_.value_or(-1), std::exchange(answer_, {})};
  answered_.reset();
  return answer;
}

std::string ShimStderr::flush() {
  decided_ = true;
  return std::exchange(head_, {});
}

} // namespace ddl
