// SPDX-License-Identifier: MIT
#include "backends/slurm/slurm_backend.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/util/run_captured.hpp"
#include "backends/slurm/srun_command.hpp"
#include "backends/slurm/srun_output.hpp"
#include "src/util/file.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/text.hpp"

namespace ddl::slurm {

namespace {

constexpr auto k_step_wait = std::chrono::seconds(5);

// The name scancel --signal takes: "USR1", else the number.
std::string scancel_signal(int signo) {
  std::string_view abbrev = signal_abbrev(signo);
  return abbrev.empty() ? std::to_string(signo) : std::string(abbrev);
}

// The newest numbered step of this allocation ("J.S"), from squeue: the step
// ddl started, when rank 0's marker has not come through srun yet.
std::optional<std::string> newest_step() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') {
    return std::nullopt;
  }
  auto listed = run_captured({"squeue", "-h", "-s", "-j", job, "-o", "%i"}, Millis{10'000}, {.part_of_stop = true});
  if (!listed || !listed->succeeded()) {
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

} // namespace

SlurmBackend::SlurmBackend(SlurmOptions options)
    : LauncherBackend("srun", k_step_wait), options_(std::move(options)) {}

SlurmBackend::~SlurmBackend() { shutdown(); }

Result<void> SlurmBackend::find_launcher(const Plan& /*plan*/) {
  // Looked for, not run: srun reads slurm.conf even for --version.
  const char* path = std::getenv("PATH");
  if (!find_on_path("srun", path != nullptr ? path : "")) {
    return fail(ExitCode::launch,
                "backend slurm needs Slurm's srun on PATH (Debian: apt-get install slurm-client)");
  }
  return {};
}

Result<LauncherCommand> SlurmBackend::command(std::span<const RankLaunch> launches, bool dry_run) {
  auto hostfile = gang_file("hostfile", srun_hostfile(launches), dry_run);
  if (!hostfile) {
    return fail(hostfile.error());
  }
  if (!dry_run) {
    std::lock_guard lock(step_mutex_);
    step_.reset();  // a new step
  }
  SrunSettings settings;
  settings.hostfile = *hostfile;
  settings.srun_args = options_.srun_args;
  settings.workdir = launcher_workdir(launches);
  return build_srun_command(launches, settings);
}

std::unique_ptr<LauncherOutput> SlurmBackend::parse_output(int world_size, LauncherOutput::Sink sink) {
  return std::make_unique<LabeledOutput>(world_size, std::move(sink), [this](const std::string& step) {
    std::lock_guard lock(step_mutex_);
    step_ = step;
  });
}

// scancel --signal SIG JOB.STEP: the step's tasks get SIG, srun keeps running.
// Rank 0's marker may still be on its way through srun's I/O when the ranks
// already run: wait for it a little before falling back to srun's own TERM.
bool SlurmBackend::signal_step(int signo) {
  std::optional<std::string> step;
  const auto deadline = std::chrono::steady_clock::now() + k_step_wait;
  while (true) {
    {
      std::lock_guard lock(step_mutex_);
      step = step_;
    }
    if (step || launcher_done() || std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!step && !launcher_done()) {
    step = newest_step();
  }
  if (!step) {
    return false;
  }
  std::vector<std::string> argv = {"scancel", "--quiet"};
  if (signo != SIGKILL) {
    argv.push_back("--signal=" + scancel_signal(signo));
  }
  argv.push_back(*step);
  auto done = run_captured(argv, Millis{10'000}, {.part_of_stop = true});
  const bool sent = done && done->succeeded();
  spdlog::debug("slurm: scancel {} {}: {}", argv[argv.size() - 2], *step,
                sent ? "sent" : done ? "failed: " + std::string(trim(done->err)) : done.error().message);
  return sent;
}

void SlurmBackend::deliver(int signo) {
  if (!signal_step(signo)) {
    // The step is not known yet: srun's own TERM ends it (tasks get KILL).
    spdlog::info("slurm: the step is not known (or scancel failed): SIGTERM to srun ends it");
    kill_launcher(SIGTERM);
  }
}

} // namespace ddl::slurm
