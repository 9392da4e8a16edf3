// SPDX-License-Identifier: MIT
#include "src/launch/report.hpp"

#include <chrono>
#include <csignal>

#include <fmt/core.h>

#include "src/render/container.hpp"
#include "src/util/duration.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

// The result name and exit code of each way a job ends.
void set_result(JobSummary& summary, const AttemptEnd& end) {
  switch (end.reason) {
  case StopReason::none:
    summary.result = "ok";
    summary.exit_code = 0;
    return;
  case StopReason::failed:
    summary.result = "failed";
    // A rank that never ran is a launch error, whatever status its backend saw.
    summary.exit_code = end.first.how.launch_error.empty() ? end.first.how.code : to_int(ExitCode::launch);
    return;
  case StopReason::timeout:
    summary.result = "timeout";
    summary.exit_code = to_int(ExitCode::timeout);
    return;
  case StopReason::signal:
    summary.result = "interrupted";
    summary.exit_code = 128 + end.stop_signal;
    return;
  case StopReason::stdout_closed:
    summary.result = "interrupted";
    summary.exit_code = 128 + SIGPIPE;
    return;
  case StopReason::launch_error:
    summary.result = "launch_error";
    summary.exit_code = to_int(end.error.code);
    return;
  case StopReason::watchdog:
    summary.result = "rendezvous_timeout";
    summary.exit_code = to_int(end.error.code);
    return;
  case StopReason::stalled:
    summary.result = "stalled";
    summary.exit_code = to_int(ExitCode::stalled);
    return;
  }
}

// A rank that exited with the user's "requeue me" code, whatever else ended the job.
bool wants_requeue(const AttemptEnd& end) {
  return end.requeue_exit_code && end.first.rank >= 0 && end.first.how.signal == 0 &&
         end.first.how.launch_error.empty() && end.first.how.code == *end.requeue_exit_code;
}

} // namespace

JobSummary job_summary(const AttemptEnd& end, int attempts, double elapsed_s) {
  JobSummary summary;
  summary.attempts = attempts;
  summary.elapsed_s = elapsed_s;
  // The rendezvous watchdog stops ranks that did not fail: none is named.
  if (end.first.rank >= 0 && end.reason != StopReason::watchdog) {
    summary.failed_rank = end.first.rank;
    summary.host = end.failed_host;
    summary.how = end.first.how;
    summary.rank_error = end.rank_error;
  }
  set_result(summary, end);
  if (wants_requeue(end)) {
    summary.result = "requeue";
    summary.exit_code = *end.requeue_exit_code;
    summary.failed_rank = end.first.rank;
    summary.host = end.failed_host;
    summary.how = end.first.how;
  }
  summary.checkpointed = end.checkpointed;
  return summary;
}

std::string describe_failure(const RankLaunch& launch, const FirstFailure& first) {
  std::string how = !first.how.stopped_by.empty()   ? "was stopped: " + first.how.stopped_by
                     : !first.how.launch_error.empty() && first.how.ran
                         ? "ended without an exit status: " + first.how.launch_error
                     : !first.how.launch_error.empty() ? "could not run: " + first.how.launch_error
                     : first.how.signal != 0     ? fmt::format("was killed by {}", signal_name(first.how.signal))
                                                 : fmt::format("exited with code {}", first.how.code);
  return fmt::format("rank {} on {} {} after {}", launch.rank, launch.host.name, how,
                     format_elapsed(first.elapsed_s));
}

namespace {

std::string rank_error_text(int rank, const RankError& error) {
  std::string text = fmt::format("ddl: rank {} raised (its torch error file): {}\n", rank,
                                 error.message.empty() ? "(no message)" : error.message);
  if (!error.traceback.empty()) {
    text += fmt::format("ddl: traceback of rank {}:\n", rank);
    for (const auto& line : split(error.traceback, '\n')) {
      if (!line.empty()) {
        text += fmt::format("  [{}] {}\n", rank, line);
      }
    }
  }
  return text;
}

// The interpreter that ran a rank, when its argv shows one (PYTHON ARGS, or
// sh -c "PYTHON ..."): what a missing module is to be found in.
std::string interpreter_of(const RankLaunch& launch) {
  std::vector<std::string> words = launch.argv;
  if (words.size() == 3 && words[1] == "-c" && words[0].ends_with("sh")) {
    words = split(trim(words[2]), ' ');
  }
  if (words.empty()) {
    return "";
  }
  const std::string& first = words.front();
  const std::string name = first.substr(first.rfind('/') + 1);
  return name.starts_with("python") ? first : "";
}

// "No module named 'torch'" in a rank's last lines: which interpreter ran it.
std::string missing_module_text(const RankLaunch& launch, int rank, const std::deque<std::string>& stderr_tail) {
  constexpr std::string_view k_marker = "No module named '";
  for (const auto& line : stderr_tail) {
    const std::size_t at = line.find(k_marker);
    if (at == std::string::npos) {
      continue;
    }
    const std::size_t from = at + k_marker.size();
    const std::string module = line.substr(from, line.find('\'', from) - from);
    const std::string python = interpreter_of(launch);
    if (python.empty()) {
      return fmt::format("ddl: rank {} found no module '{}' on {}; the Python that ran it lacks it\n", rank, module,
                         launch.host.name);
    }
    return fmt::format("ddl: rank {} ran {}{} on {}, which has no module '{}': name another with --python or [job] "
                       "python\n",
                       rank, python, python.find('/') == std::string::npos ? " (the first on its PATH)" : "",
                       launch.host.name, module);
  }
  return "";
}

} // namespace

std::string failure_summary(const RankLaunch& launch, const FirstFailure& first,
                            const std::deque<std::string>& stderr_tail, int attempts,
                            const std::optional<RankError>& error) {
  // Attempts are named as the ranks see them (DDL_ATTEMPT, 0 first).
  std::string text = fmt::format("ddl: error: {}{}\n", describe_failure(launch, first),
                                 attempts > 1 ? fmt::format(" (DDL_ATTEMPT={}, no restart left)", attempts - 1) : "");
  if (stderr_tail.empty()) {
    text += fmt::format("ddl: rank {} wrote nothing on stderr\n", first.rank);
  } else {
    text += fmt::format("ddl: last {} stderr line{} of rank {}:\n", stderr_tail.size(),
                        stderr_tail.size() == 1 ? "" : "s", first.rank);
    for (const auto& line : stderr_tail) {
      text += fmt::format("  [{}] {}\n", first.rank, line);
    }
    text += missing_module_text(launch, first.rank, stderr_tail);
  }
  if (first.how.launch_error.empty() && first.how.signal == 0) {
    text += container_gpu_failure(launch.argv, first.how.code, stderr_tail, first.rank, launch.host.name);
  }
  return error ? text + rank_error_text(first.rank, *error) : text;
}

std::string restart_message(const RankLaunch& launch, const FirstFailure& first, int next_attempt,
                            int max_restarts) {
  return fmt::format("ddl: {}; restarting (DDL_ATTEMPT={}, restart {} of {})\n", describe_failure(launch, first),
                     next_attempt, next_attempt, max_restarts);
}

std::string elastic_restart_message(const RankLaunch& launch, const FirstFailure& first, int next_attempt,
                                    Millis wait, bool hosts_left) {
  return fmt::format("ddl: {}; {} (DDL_ATTEMPT={}){}\n", describe_failure(launch, first),
                     hosts_left ? "restarting on the hosts left"
                                : "no host of this attempt is left: running the host source again",
                     next_attempt, wait.count() > 0 ? ", in " + format_duration(wait) : "");
}

// nullopt: a deadline the caller set without a timeout of the job's own.
std::string timeout_message(std::optional<Millis> timeout) {
  return timeout ? fmt::format("ddl: error: timed out after {}\n", format_duration(*timeout))
                 : std::string("ddl: error: timed out\n");
}

std::string interrupted_message(int signo, int ranks) {
  return fmt::format("ddl: interrupted by {}: stopped {} (exit {})\n", signal_name(signo),
                     ranks == 1 ? "the rank" : fmt::format("the {} ranks", ranks), 128 + signo);
}

std::string format_elapsed(double seconds) {
  if (seconds < 60 && seconds == static_cast<double>(static_cast<long long>(seconds))) {
    return fmt::format("{}s", static_cast<long long>(seconds));
  }
  if (seconds < 10) {
    return fmt::format("{:.2f}s", seconds);
  }
  if (seconds < 60) {
    return fmt::format("{:.1f}s", seconds);
  }
  auto whole = static_cast<long long>(seconds);
  if (whole < 3600) {
    return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  }
  return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
}

} // namespace ddl
