// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/launch/backend.hpp"

namespace ddl::mpirun {

// The whole gang as one `mpirun` (see mpirun_command.hpp). ddl collects the
// rank launches and starts mpirun with the last one; mpirun places rank r on
// the host the plan gives it (the hostfile lists the plan's hosts in order
// with their rank counts) and aborts every rank when one fails, which is the
// gang semantics ddl wants. The first rank to fail is known from the rank
// script's marker (its exit code) or from mpirun's "exited on signal" note;
// the other ranks are reported as ended by SIGTERM.
class MpirunBackend final : public Backend {
public:
  explicit MpirunBackend(const JobSpec& job);
  ~MpirunBackend() override;

  Result<void> prepare(const Plan& plan) override;
  Result<void> start(const RankLaunch& launch, RankEvents& events) override;
  void signal(int rank, int signo) override;
  void shutdown() override;

private:
  void run_mpirun(std::vector<std::string> argv, EnvList env, RankEvents& events);
  void report_exits(int status, class TaggedOutput& output, RankEvents& events);

  std::string job_file_;
  std::string workdir_;
  std::string transport_;
  std::vector<std::string> keep_names_;
  std::string hostfile_dir_;
  std::string hostfile_;
  int world_size_ = 0;

  std::mutex mutex_;
  std::vector<RankLaunch> launches_;
  std::thread runner_;
  std::atomic<long> pid_{-1};
  std::atomic<bool> done_{false};
  int last_signal_ = 0;
  std::chrono::steady_clock::time_point last_signal_time_{};
};

} // namespace ddl::mpirun
