// SPDX-License-Identifier: MIT
#include "backends/slurm/slurm_backend.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/child_process.hpp"
#include "backends/slurm/srun_command.hpp"
#include "backends/slurm/srun_output.hpp"
#include "src/util/file.hpp"
#include "src/util/text.hpp"

namespace ddl::slurm {

namespace {

constexpr auto k_shutdown_wait = std::chrono::seconds(10);
constexpr auto k_step_wait = std::chrono::seconds(5);

std::string workdir_of(std::span<const RankLaunch> launches) {
  return launches.empty() || launches.front().workdir_is_default ? "" : launches.front().workdir;
}

std::string signal_name(int signo) {
  switch (signo) {
  case SIGINT: return "INT";
  case SIGTERM: return "TERM";
  case SIGHUP: return "HUP";
  case SIGQUIT: return "QUIT";
  case SIGUSR1: return "USR1";
  case SIGUSR2: return "USR2";
  case SIGKILL: return "KILL";
  default: return std::to_string(signo);
  }
}

// The newest numbered step of this allocation ("J.S"), from squeue: the step
// ddl started, when rank 0's marker has not come through srun yet.
std::optional<std::string> newest_step() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') {
    return std::nullopt;
  }
  auto listed = run_captured({"squeue", "-h", "-s", "-j", job, "-o", "%i"}, 10'000, /*part_of_stop=*/true);
  if (!listed || listed->exit.code != 0) {
    return std::nullopt;
  }
  std::optional<std::string> newest;
  long long newest_id = -1;
  for (const auto& line : split(listed->out, '\n')) {
    std::string_view id = trim(line);
    std::size_t dot = id.find('.');
    auto step = dot == std::string_view::npos ? std::nullopt : parse_int(id.substr(dot + 1));
    if (step && *step > newest_id) {
      newest_id = *step;
      newest = std::string(id);
    }
  }
  return newest;
}

// A rank's exit code as ddl reports it; 143 after Slurm said it cancelled
// the step was Slurm's stop, not the rank's failure.
RankExit exit_of_code(int code, const LabeledOutput& output) {
  const int signo = code > 128 && code < 128 + 65 ? code - 128 : 0;
  if (code == 128 + SIGTERM && output.cancelled()) {
    return RankExit{code, signo, "",
                    fmt::format("Slurm cancelled the step (scancel, the time limit or preemption): {}",
                                *output.cancelled())};
  }
  return RankExit{code, signo, ""};
}

} // namespace

SlurmBackend::SlurmBackend(SlurmOptions options) : options_(std::move(options)) {}

SlurmBackend::~SlurmBackend() {
  shutdown();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string SlurmBackend::dry_run_text(std::span<const RankLaunch> launches) const {
  SrunSettings settings;
  settings.hostfile = "<hostfile>";
  settings.srun_args = options_.srun_args;
  settings.workdir = workdir_of(launches);
  return slurm::dry_run_text(launches, settings);
}

Result<void> SlurmBackend::prepare(const Plan& plan, std::span<const RankLaunch> /*launches*/) {
  // Looked for, not run: srun reads slurm.conf even for --version.
  const char* path = std::getenv("PATH");
  if (!find_on_path("srun", path != nullptr ? path : "")) {
    return fail(ExitCode::launch,
                "backend slurm needs Slurm's srun on PATH (Debian: apt-get install slurm-client)");
  }
  world_size_ = plan.world_size;
  std::lock_guard lock(gang_.mutex);
  launches_.clear();
  gang_.done = false;
  step_.reset();
  return {};
}

Result<void> SlurmBackend::start(const RankLaunch& launch, RankEvents& events) {
  std::lock_guard lock(gang_.mutex);
  if (world_size_ == 0) {
    return fail(ExitCode::launch, "slurm backend: start before prepare");
  }
  launches_.push_back(launch);
  if (static_cast<int>(launches_.size()) < world_size_) {
    return {};
  }
  std::sort(launches_.begin(), launches_.end(),
            [](const RankLaunch& a, const RankLaunch& b) { return a.rank < b.rank; });
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
  auto hostfile = write_private_file("ddl-slurm", "hostfile", srun_hostfile(launches_), dir_);
  if (!hostfile) {
    return fail(hostfile.error());
  }
  SrunSettings settings;
  settings.hostfile = *hostfile;
  settings.srun_args = options_.srun_args;
  settings.workdir = workdir_of(launches_);
  auto command = build_srun_command(launches_, settings);
  if (!command) {
    return fail(command.error());
  }
  spdlog::info("slurm: one step of {} tasks: srun --ntasks {} --distribution=arbitrary", world_size_,
               world_size_);
  if (gang_.runner.joinable()) {
    gang_.runner.join();
  }
  gang_.done = false;
  step_.reset();
  // srun runs under its own thread, which lives as long as srun:
  // PR_SET_PDEATHSIG fires when the spawning thread ends. When ddl dies,
  // srun gets SIGTERM and ends the step (its tasks get SIGKILL).
  gang_.runner = std::thread([this, argv = command->argv, env = command->env, &events]() mutable {
    run_srun(std::move(argv), std::move(env), events);
  });
  return {};
}

void SlurmBackend::run_srun(std::vector<std::string> argv, EnvList env, RankEvents& events) {
  LabeledOutput output(world_size_, [&](int rank, Stream stream, std::string_view bytes) {
    events.output(rank, stream, bytes);
  });
  reported_.assign(static_cast<std::size_t>(world_size_), false);
  auto status = gang_.run(argv, std::move(env), world_size_, events, [&](Stream stream, std::string_view bytes) {
    output.feed(stream, bytes);
    if (!step_ready_) {
      if (auto step = output.step()) {
        std::lock_guard lock(gang_.mutex);
        step_ = *step;
        step_ready_ = true;
      }
    }
    // A rank's end is reported as it comes: one that exits 0 to srun after
    // a stop signal (rank_script) ends the gang through ddl, not srun. 143
    // waits for srun: it is how Slurm stops a step (scancel, a failed node),
    // and what Slurm says by then names the cause.
    for (auto [rank, code] : output.take_ended()) {
      if (code != 128 + SIGTERM) {
        report_exit(rank, exit_of_code(code, output), events);
      }
    }
  });
  if (!status) {
    return;
  }
  output.finish();
  {
    std::lock_guard lock(gang_.mutex);
    step_.reset();
    step_ready_ = false;
  }
  report_exits(*status, output, events);
  gang_.done = true;
}

void SlurmBackend::report_exits(int status, const LabeledOutput& output, RankEvents& events) {
  RankExit whole = exit_of_status(status);
  if (!output.srun_text().empty()) {
    spdlog::info("srun said:\n{}", trim(output.srun_text()));
  }
  auto failure = output.first_failure();
  const bool failed_on_its_own = failure && failure->second != 128 + SIGTERM;
  // Ranks stopped by a signal exit 0 to srun (rank_script): what Slurm
  // said decides, not srun's exit code.
  if (!failed_on_its_own && report_slurm_ended_step(output, events)) {
    return;
  }
  if (!failure && whole.code != 0) {
    // srun failed on its own (no allocation, bad srun_args, nodes, command).
    std::string said = last_lines(output.srun_text(), 12);
    RankExit launch_failure{whole.code, whole.signal,
                            fmt::format("srun failed (exit {}){}", whole.code,
                                        said.empty() ? "" : ":\n" + said)};
    for (int rank = 0; rank < world_size_; ++rank) {
      report_exit(rank, launch_failure, events);
    }
    return;
  }
  if (failure) {
    report_exit(failure->first, exit_of_code(failure->second, output), events);
  }
  for (int rank = 0; rank < world_size_; ++rank) {
    report_exit(rank, failure ? RankExit{128 + SIGTERM, SIGTERM, ""} : RankExit{}, events);
  }
}

// A rank's end, once: as its marker comes, or when srun has ended.
void SlurmBackend::report_exit(int rank, RankExit how, RankEvents& events) {
  auto seen = reported_.at(static_cast<std::size_t>(rank));
  if (!seen) {
    reported_[static_cast<std::size_t>(rank)] = true;
    events.exited(rank, std::move(how));
  }
}

// Slurm itself ended the step: a node failed (the first rank on it is named,
// exit 3 as for a lost ssh host), or the job was cancelled (scancel, its time
// limit, preemption: every rank was stopped by SIGTERM, so 143).
bool SlurmBackend::report_slurm_ended_step(const LabeledOutput& output, RankEvents& events) {
  int blamed = -1;
  RankExit how;
  if (const auto& node = output.failed_node()) {
    std::lock_guard lock(gang_.mutex);
    for (const RankLaunch& launch : launches_) {
      if (launch.host.name == *node || launch.host.address == *node) {
        blamed = launch.rank;
        break;
      }
    }
    how = RankExit{to_int(ExitCode::launch), 0, fmt::format("Slurm reports that node {} failed", *node)};
  } else if (output.cancelled()) {
    blamed = 0;
    how = exit_of_code(128 + SIGTERM, output);
  }
  if (blamed < 0) {
    return false;
  }
  report_exit(blamed, how, events);
  for (int rank = 0; rank < world_size_; ++rank) {
    report_exit(rank, RankExit{128 + SIGTERM, SIGTERM, ""}, events);
  }
  return true;
}

// scancel --signal SIG JOB.STEP: the step's tasks get SIG, srun keeps running.
// Rank 0's marker may still be on its way through srun's I/O when the ranks
// already run: wait for it a little before falling back to srun's own TERM.
bool SlurmBackend::signal_step(int signo) {
  std::optional<std::string> step;
  const auto deadline = std::chrono::steady_clock::now() + k_step_wait;
  while (true) {
    {
      std::lock_guard lock(gang_.mutex);
      step = step_;
    }
    if (step || gang_.done || std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!step && !gang_.done) {
    step = newest_step();
  }
  if (!step) {
    return false;
  }
  std::vector<std::string> argv = {"scancel", "--quiet"};
  if (signo != SIGKILL) {
    argv.push_back("--signal=" + signal_name(signo));
  }
  argv.push_back(*step);
  auto done = run_captured(argv, 10'000, /*part_of_stop=*/true);
  const bool sent = done && done->exit.code == 0;
  spdlog::debug("slurm: scancel {} {}: {}", argv[argv.size() - 2], *step,
                sent ? "sent" : done ? "failed: " + std::string(trim(done->err)) : done.error().message);
  return sent;
}

void SlurmBackend::signal(int, int signo) {
  long pid = 0;
  {
    std::lock_guard lock(gang_.mutex);
    pid = gang_.pid;
    if (pid <= 0) {
      return;
    }
    // Every rank is behind the one srun: forward each signal once.
    if (!gang_.first_in_burst(signo)) {
      return;
    }
  }
  if (!signal_step(signo)) {
    // The step is not known yet: srun's own TERM ends it (tasks get KILL).
    spdlog::info("slurm: the step is not known (or scancel failed): SIGTERM to srun ends it");
    ::kill(static_cast<pid_t>(pid), SIGTERM);
  }
}

// Every rank may be reported (their markers) while srun still winds the
// step down: give it that time before its TERM.
void SlurmBackend::shutdown() { gang_.end(k_shutdown_wait, k_step_wait); }

} // namespace ddl::slurm
