// SPDX-License-Identifier: MIT
#include "backends/launcher_backend.hpp"

#include <csignal>
#include <filesystem>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/child_process.hpp"
#include "backends/launcher_command.hpp"
#include "src/launch/stdin_feed.hpp"
#include "src/util/file.hpp"
#include "src/util/process.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr std::size_t k_max_launcher_text = 64 * 1024;
constexpr auto k_shutdown_wait = std::chrono::seconds(10);
constexpr long k_dump_reach_ms = 15'000;  // a dumper's way to the host (an ssh login), past its timeout
constexpr auto k_dumper_term_wait = std::chrono::seconds(3);

} // namespace

void LauncherOutput::launcher_says(std::string_view text) {
  if (launcher_text_.size() < k_max_launcher_text) {
    launcher_text_.append(text.substr(0, k_max_launcher_text - launcher_text_.size()));
  }
}

LauncherBackend::LauncherBackend(std::string launcher, std::chrono::milliseconds settle)
    : launcher_(std::move(launcher)), settle_(settle) {}

LauncherBackend::~LauncherBackend() {
  shutdown();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Result<void> LauncherBackend::prepare(const Plan& plan, std::span<const RankLaunch> /*launches*/) {
  if (auto found = find_launcher(plan); !found) {
    return found;
  }
  prepared_ = true;
  done_ = false;
  return {};
}

GangStart LauncherBackend::start(std::span<const RankLaunch> launches, RankEvents& events) {
  if (!prepared_) {
    return {0, Error{ExitCode::launch, fmt::format("{} backend: start before prepare", name())}};
  }
  if (stop::requested()) {  // never a gang after a Ctrl-C or the deadline
    return {0, stop::error("starting the ranks")};
  }
  auto command = this->command(launches, false);
  if (!command) {
    return {0, command.error()};
  }
  spdlog::info("{}: {} rank{}: {}", name(), launches.size(), launches.size() == 1 ? "" : "s",
               launcher_words(command->argv));
  if (runner_.joinable()) {
    runner_.join();
  }
  launches_.assign(launches.begin(), launches.end());
  events_ = &events;
  done_ = false;
  {
    std::lock_guard lock(dump_mutex_);
    dumps_stopped_ = false;
  }
  // The launcher is started from its own thread, which lives as long as
  // it: PR_SET_PDEATHSIG fires when the spawning thread ends. When ddl
  // dies, the launcher gets SIGTERM and ends its ranks (it must not die of
  // SIGPIPE on our closed pipes before).
  runner_ = std::thread([this, command = std::move(*command), &events]() mutable { run(std::move(command), events); });
  return {launches.size(), std::nullopt};
}

void LauncherBackend::run(LauncherCommand command, RankEvents& events) {
  const int world = static_cast<int>(launches_.size());
  reported_.assign(launches_.size(), 0);
  auto child = spawn_piped(command.argv, {.set_env = std::move(command.env), .new_process_group = true,
                                          .death_signal = SIGTERM, .ignore_sigpipe = true});
  if (!child) {
    for (int rank = 0; rank < world; ++rank) {
      events.started(rank, -1);
      report_exit(rank, RankExit{1, 0, child.error().message});
    }
    done_ = true;
    return;
  }
  pid_ = child->pid;
  // The launcher forwards its stdin to the ranks its --stdin/--input names.
  if (launcher_stdin_target(launches_) != "none") {
    attach_stdin(-1, fd_stdin_sink(child->in_fd));
    start_stdin();  // the one sink, attached after the gang's start() returned
    child->in_fd = -1;
  }
  close_fd(child->in_fd);
  for (int rank = 0; rank < world; ++rank) {
    events.started(rank, child->pid);
  }
  // A rank's end is its last event: what the launcher says for it later
  // (Slurm's "STEP CANCELLED" comes as a rank's stderr) goes nowhere.
  auto output = parse_output(world, [this, &events](int rank, Stream stream, std::string_view bytes) {
    if (rank >= 0 && static_cast<std::size_t>(rank) < reported_.size() && !reported_[static_cast<std::size_t>(rank)]) {
      events.output(rank, stream, bytes);
    }
  });
  int status = pump_and_wait(*child, [&](Stream stream, std::string_view bytes) {
    output->feed(stream, bytes);
    for (auto [rank, code] : output->take_ended()) {
      if (code != 128 + SIGTERM) {
        report_exit(rank, output->exit_of_code(code));
      }
    }
  });
  {
    std::lock_guard lock(mutex_);
    pid_ = -1;
  }
  stop_dumpers();  // no dumper's output after a rank's end
  output->finish();
  report_exits(status, *output);
  done_ = true;
}

// Every rank's end, once the launcher has exited: the blamed rank's own,
// SIGTERM for the others; or, when no rank is to blame and the launcher
// failed, its failure for every rank.
void LauncherBackend::report_exits(int status, const LauncherOutput& output) {
  const RankExit whole = exit_of_status(status);
  if (!output.launcher_text().empty()) {
    spdlog::info("{} said:\n{}", launcher_, trim(output.launcher_text()));
  }
  const auto blamed = output.blame(whole, launches_);
  if (!blamed && whole.code != 0) {
    // The launcher failed on its own (no hosts, no program, bad options).
    std::string said = last_lines(output.launcher_text(), 12);
    RankExit failure{whole.code, whole.signal,
                     fmt::format("{} failed (exit {}){}", launcher_, whole.code, said.empty() ? "" : ":\n" + said)};
    for (std::size_t rank = 0; rank < launches_.size(); ++rank) {
      report_exit(static_cast<int>(rank), failure);
    }
    return;
  }
  if (blamed) {
    report_exit(blamed->rank, blamed->how);
  }
  for (std::size_t rank = 0; rank < launches_.size(); ++rank) {
    report_exit(static_cast<int>(rank), blamed ? RankExit{128 + SIGTERM, SIGTERM} : RankExit{});
  }
}

void LauncherBackend::report_exit(int rank, RankExit how) {
  std::lock_guard lock(report_mutex_);
  if (rank < 0 || static_cast<std::size_t>(rank) >= reported_.size() || reported_[static_cast<std::size_t>(rank)]) {
    return;
  }
  reported_[static_cast<std::size_t>(rank)] = 1;
  events_->exited(rank, how);
}

void LauncherBackend::signal_all(int signo) {
  if (pid_ > 0) {
    deliver(signo);
  }
}

void LauncherBackend::deliver(int signo) { kill_launcher(signo); }

std::optional<std::vector<std::string>> LauncherBackend::dump_command(const RankLaunch&, DumpTool, Millis) {
  return std::nullopt;
}

bool LauncherBackend::dump_stacks(int rank, DumpTool tool, Millis timeout) {
  if (pid_ <= 0 || rank < 0 || static_cast<std::size_t>(rank) >= launches_.size()) {
    return false;
  }
  auto argv = dump_command(launches_[static_cast<std::size_t>(rank)], tool, timeout);
  if (!argv) {
    return false;
  }
  std::lock_guard lock(dump_mutex_);
  if (dumps_stopped_) {
    return false;
  }
  dumpers_.push_back(thread_without_signals(
      [this, rank, argv = std::move(*argv), timeout]() mutable { run_dumper(rank, std::move(argv), timeout); }));
  return true;
}

// The dumper leads a process group of its own (killed when this thread
// ends, by stop_dumpers, or `timeout` and the way to the host later); what
// it prints is the rank's stderr, as the rank's own dump would be.
void LauncherBackend::run_dumper(int rank, std::vector<std::string> argv, Millis timeout) {
  SpawnOptions options;
  options.new_process_group = true;
  options.death_signal = SIGKILL;
  auto child = spawn_piped(argv, options);
  if (!child) {
    std::lock_guard lock(report_mutex_);
    if (!reported_[static_cast<std::size_t>(rank)]) {
      events_->output(rank, Stream::err, fmt::format("ddl: no stack dump: {}\n", child.error().message));
    }
    return;
  }
  {
    std::lock_guard lock(dump_mutex_);
    if (dumps_stopped_) {
      kill_child_tree(child->pid);
    }
    dumper_pids_.push_back(child->pid);
  }
  close_fd(child->in_fd);
  pump_and_wait(
      *child,
      [this, rank](Stream, std::string_view bytes) {
        std::lock_guard lock(report_mutex_);
        if (!reported_[static_cast<std::size_t>(rank)]) {
          events_->output(rank, Stream::err, bytes);
        }
      },
      timeout.count() + k_dump_reach_ms);
  std::lock_guard lock(dump_mutex_);
  std::erase(dumper_pids_, static_cast<long>(child->pid));
}

void LauncherBackend::stop_dumpers() {
  std::vector<std::thread> dumpers;
  {
    std::lock_guard lock(dump_mutex_);
    dumps_stopped_ = true;
    for (long pid : dumper_pids_) {
      ::kill(static_cast<pid_t>(-pid), SIGTERM);  // the rsh agent ends its remote command
    }
    dumpers.swap(dumpers_);
  }
  auto deadline = std::chrono::steady_clock::now() + k_dumper_term_wait;
  for (;;) {
    {
      std::lock_guard lock(dump_mutex_);
      if (dumper_pids_.empty() || std::chrono::steady_clock::now() >= deadline) {
        for (long pid : dumper_pids_) {
          kill_child_tree(static_cast<pid_t>(pid));
        }
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::thread& dumper : dumpers) {
    dumper.join();
  }
}

void LauncherBackend::kill_launcher(int signo) {
  std::lock_guard lock(mutex_);
  if (pid_ > 0) {
    ::kill(static_cast<pid_t>(pid_.load()), signo);
  }
}

void LauncherBackend::shutdown() {
  auto wait_for_end = [this](std::chrono::milliseconds most) {
    auto deadline = std::chrono::steady_clock::now() + most;
    while (runner_.joinable() && !done_ && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  // Every rank may be reported (their markers) while the launcher still
  // winds down: give it `settle` before its TERM.
  wait_for_end(settle_);
  if (!done_) {
    kill_launcher(SIGTERM);
  }
  wait_for_end(k_shutdown_wait);
  if (!done_) {
    kill_launcher(SIGKILL);
  }
  if (runner_.joinable()) {
    runner_.join();
  }
  stop_dumpers();
}

std::string LauncherBackend::dry_run_text(std::span<const RankLaunch> launches) {
  auto command = this->command(launches, true);
  if (!command) {
    return fmt::format("{}: {}\n", launcher_, command.error().message);
  }
  return launcher_dry_run(launcher_, *command);
}

Result<std::string> LauncherBackend::gang_file(const std::string& name, const std::string& text, bool dry_run) {
  if (dry_run) {
    return fmt::format("<{}>", name);
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
  return write_private_file("ddl-" + std::string(this->name()), name, text, dir_);
}

} // namespace ddl
