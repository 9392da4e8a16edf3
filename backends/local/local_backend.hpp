// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/types.h>

#include "backends/per_rank_backend.hpp"
#include "src/util/lifeline.hpp"
#include "src/util/process_set.hpp"

namespace ddl {

// Runs every rank as a child process of ddl on this machine (see spawn.hpp
// for how one is started). One I/O thread runs the ranks' ProcessSet: it
// drains every pipe and reaps ranks through pidfds, so no pipe or rank ever
// waits on another.
// When a rank's first process exits, what is left of its process group is
// killed; a process that left the group (setsid, double fork to a new
// session) escapes that, and its pipes are closed after a short drain.
class LocalBackend final : public PerRankBackend {
public:
  LocalBackend();
  ~LocalBackend() override;

  std::string_view name() const override { return "local"; }
  // The hosts are this machine (LocalAccess).
  bool ranks_are_local() const override { return true; }
  ContainerHost container_host() const override { return ContainerHost::guarded; }

  // The stack dumper on the rank's host, onto its stderr (/proc/PID/fd/2).
  bool dump_stacks(int rank, DumpTool tool, Millis timeout) override;
  // Kills what is left, then stops the I/O thread and the lifeline; the
  // next prepare() or start starts them again (an elastic re-plan).
  void shutdown() override;

protected:
  // Enough open files for every rank's pipes; the lifeline.
  Result<void> prepare_gang(const Plan& plan, std::span<const RankLaunch> launches) override;
  // No host to reach: every rank runs here.
  std::vector<std::size_t> preflight_units(const Plan& /*plan*/) override { return {}; }
  // Call from the supervisor's thread (see spawn_rank about PDEATHSIG).
  Result<void> start_rank(const RankLaunch& launch, RankEvents& events) override;
  void signal_rank(int rank, int signo) override;

private:
  // A rank's process in the set: its output and end go to the supervisor.
  struct Child final : ChildEvents {
    Child(Lifeline& lifeline_, int rank_, pid_t pid_, RankEvents& events_)
        : lifeline(lifeline_), rank(rank_), pid(pid_), events(events_) {}
    void output(OutputStream stream, std::string_view bytes) override {
      events.output(rank, stream == OutputStream::out ? Stream::out : Stream::err, bytes);
    }
    void exited(int wait_status) override;
    void ended(int wait_status) override;

    Lifeline& lifeline;
    const int rank;
    const pid_t pid;
    RankEvents& events;
    std::atomic<bool> exited_{false};
  };
  // The lifeline and the I/O thread, started for each gang (again after
  // shutdown()).
  Result<void> begin_gang();
  void io_loop();
  void run_stack_dump(pid_t pid, DumpTool tool, Millis timeout);

  Lifeline lifeline_;
  bool lifeline_started_ = false;
  rlim_t nofile_soft_ = 0;  // the launcher's own soft limit, given to ranks
  ProcessSet ranks_;        // every rank's pipes and exit, read by io_thread_
  std::mutex mutex_;
  std::vector<std::unique_ptr<Child>> children_;
  bool stopping_ = false;
  std::thread io_thread_;
  std::mutex dump_mutex_;
  std::vector<std::thread> dumpers_;  // stack dumper runs, joined by shutdown()
  std::vector<pid_t> dumper_pids_;    // their process groups, killed by shutdown()
  bool dumps_killed_ = false;
};

} // namespace ddl
