// SPDX-License-Identifier: MIT
// ddl ps | ddl logs JOB [-f] [--rank R] | ddl stop JOB | ddl signal JOB SIG:
// this user's running jobs on this machine, through their control sockets.
#include <cstdio>
#include <memory>
#include <string>

#include <unistd.h>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "src/launch/live_client.hpp"
#include "src/launch/live_server.hpp"
#include "src/launch/report.hpp"
#include "src/util/log.hpp"
#include "src/util/table.hpp"

namespace ddl::cmd {

namespace {

struct LiveOptions {
  std::string job;
  std::string signal;
  int rank = -1;
  bool follow = false;
  bool json = false;
};

// "a,b,c" cut to about 40 bytes: "a,b (+98)".
std::string hosts_cell(const Json& hosts) {
  std::string text;
  std::size_t shown = 0;
  for (const auto& host : hosts) {
    std::string name = host.get<std::string>();
    if (!text.empty() && text.size() + name.size() > 40) {
      break;
    }
    text += (text.empty() ? "" : ",") + name;
    ++shown;
  }
  return shown < hosts.size() ? fmt::format("{} (+{})", text, hosts.size() - shown) : text;
}

Result<int> run_ps(const LiveOptions& opts) {
  auto jobs = running_jobs();
  if (!jobs) {
    return fail(jobs.error());
  }
  if (opts.json) {
    Json list = Json::array();
    for (const LiveJob& job : *jobs) {
      if (!job.answered) {
        print_warning(did_not_answer(job));
      }
      list.push_back(job.info);
    }
    fmt::print("{}\n", to_json_text(Json{{"jobs", list}}));
    return 0;
  }
  std::vector<TableRow> rows{{"ID", "NAME", "RANKS", "HOSTS", "STATE", "AGE"}};
  for (const LiveJob& job : *jobs) {
    if (!job.answered) {
      print_warning(did_not_answer(job));
      rows.push_back({job.id(), "?", "?", "?", job.info.value("state", "not answering"), "?"});
      continue;
    }
    std::string state = job.info.value("state", "");
    if (int attempt = job.info.value("attempt", 0); attempt > 0) {
      state += fmt::format(" (DDL_ATTEMPT={})", attempt);
    }
    rows.push_back({job.id(), job.name(), std::to_string(job.info.value("ranks", 0)),
                    hosts_cell(job.info.value("hosts", Json::array())), state,
                    format_elapsed(static_cast<double>(job.info.value("age_s", 0LL)))});
  }
  std::fputs(align_columns(rows).c_str(), stdout);
  return 0;
}

// One "L RANK o|e n|p|c TEXT" line, as ddl printed it: "[R] TEXT".
void print_log_line(const std::string& line) {
  std::size_t rank_end = line.find(' ', 2);
  if (rank_end == std::string::npos || line.size() < rank_end + 5) {
    return;
  }
  std::string rank = line.substr(2, rank_end - 2);
  const bool err = line[rank_end + 1] == 'e';
  const bool partial = line[rank_end + 3] == 'p';
  std::string text = fmt::format("[{}{}] {}\n", rank, partial ? "+" : "", line.substr(rank_end + 5));
  std::FILE* to = err ? stderr : stdout;
  std::fwrite(text.data(), 1, text.size(), to);
  std::fflush(to);
}

Result<int> run_logs(const LiveOptions& opts) {
  auto job = find_job(opts.job);
  if (!job) {
    return fail(job.error());
  }
  auto connection = LiveConnection::open(*job, fmt::format("logs {} {}", opts.rank, opts.follow ? 1 : 0), false);
  if (!connection) {
    return fail(connection.error());
  }
  std::string line;
  while (connection->next_line(line)) {
    if (line.starts_with("L ")) {
      print_log_line(line);
    } else if (line.starts_with("N ")) {
      fmt::print(stderr, "ddl: {}\n", line.substr(2));
    } else if (line.starts_with("X ") && line.find("followers") != std::string::npos) {
      return fail(ExitCode::launch, line.substr(2));
    } else if (line.starts_with("X ")) {
      return fail(ExitCode::usage, line.substr(2));
    } else if (line.starts_with("E ")) {
      fmt::print(stderr, "ddl: job {} ({}) ended with exit code {}\n", job->name(), job->id(), line.substr(2));
    }
  }
  return 0;
}

// The answer to stop or signal: "O what was done", "X why not", "E CODE".
Result<int> print_answer(LiveConnection& connection, const LiveJob& job) {
  std::string line;
  bool answered = false;
  while (connection.next_line(line)) {
    answered = true;
    if (line.starts_with("X ")) {
      return fail(ExitCode::launch, fmt::format("job {} ({}): {}", job.name(), job.id(), line.substr(2)));
    }
    if (line.starts_with("O ")) {
      fmt::print(stderr, "ddl: job {} ({}): {}\n", job.name(), job.id(), line.substr(2));
    } else if (line.starts_with("E ")) {
      fmt::print(stderr, "ddl: job {} ({}) ended with exit code {}\n", job.name(), job.id(), line.substr(2));
    }
  }
  if (!answered) {
    return fail(ExitCode::launch, did_not_answer(job));
  }
  return 0;
}

Result<int> run_stop(const LiveOptions& opts, const std::string& request) {
  auto job = find_job(opts.job);
  if (!job) {
    return fail(job.error());
  }
  auto connection = LiveConnection::open(*job, request, true);
  if (!connection) {
    return fail(connection.error());
  }
  return print_answer(*connection, *job);
}

Result<int> run_signal(const LiveOptions& opts) {
  int signo = parse_signal(opts.signal);
  if (signo == 0) {
    return fail(ExitCode::usage, fmt::format("'{}' is not a signal (a name such as USR1 or SIGUSR1, or a number)",
                                             opts.signal));
  }
  return run_stop(opts, fmt::format("signal {}", signo));
}

Command command_of(std::shared_ptr<LiveOptions> opts, Result<int> (*run)(const LiveOptions&)) {
  return [opts, run] {
    auto code = run(*opts);
    return code ? *code : report(code.error());
  };
}

Result<int> run_stop_job(const LiveOptions& opts) { return run_stop(opts, "stop"); }

} // namespace

void add_live(CLI::App& app, Command& selected) {
  auto opts = std::make_shared<LiveOptions>();
  CLI::App* ps = app.add_subcommand("ps", "List your running ddl jobs on this machine");
  ps->add_flag("--json", opts->json, "Machine-readable JSON on stdout");
  ps->footer("Example:\n  ddl ps --json");
  ps->callback([&selected, opts] { selected = command_of(opts, run_ps); });

  CLI::App* logs = app.add_subcommand("logs", "Print a running job's recent rank output (-f: and follow it)");
  logs->add_option("job", opts->job, "Job name or id (see ddl ps)")->required();
  logs->add_flag("-f,--follow", opts->follow, "Keep printing new lines until the job ends");
  logs->add_option("--rank", opts->rank, "Only this rank")->check(CLI::NonNegativeNumber);
  logs->footer("Example:\n  ddl logs resnet -f --rank 0");
  logs->callback([&selected, opts] { selected = command_of(opts, run_logs); });

  CLI::App* stop = app.add_subcommand("stop", "Stop a running job as Ctrl-C would, and wait for its end");
  stop->add_option("job", opts->job, "Job name or id (see ddl ps)")->required();
  stop->footer("Example:\n  ddl stop resnet");
  stop->callback([&selected, opts] { selected = command_of(opts, run_stop_job); });

  CLI::App* signal = app.add_subcommand("signal", "Send a signal to a running job's ranks (INT, TERM, HUP: to ddl)");
  signal->add_option("job", opts->job, "Job name or id (see ddl ps)")->required();
  signal->add_option("signal", opts->signal, "USR1, SIGUSR2, CONT, TSTP, ... or a number")->required();
  signal->footer("Example (ask every rank to checkpoint):\n  ddl signal resnet USR1");
  signal->callback([&selected, opts] { selected = command_of(opts, run_signal); });
}

} // namespace ddl::cmd
