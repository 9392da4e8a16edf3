// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/types.h>

#include "src/launch/backend.hpp"
#include "src/util/lifeline.hpp"

namespace ddl {

// Runs every rank as a child process of ddl on this machine (see spawn.hpp
// for how one is started). One I/O thread drains every pipe with epoll and
// reaps ranks through pidfds, so no pipe or rank ever waits on another.
// When a rank's first process exits, what is left of its process group is
// killed; a process that left the group (setsid, double fork to a new
// session) escapes that, and its pipes are closed after a short drain.
class LocalBackend final : public Backend {
public:
  LocalBackend();
  ~LocalBackend() override;

  std::string_view name() const override { return "local"; }
  // This machine's GPU count gives every host its slots.
  Result<Inventory> probe_gpus(Inventory hosts) override;
  // Every host is this machine: this ddl, this machine's GPUs.
  std::vector<HostCheck> check(const Inventory& hosts) override;
  // This machine's own route to `target`, the same for every host.
  std::vector<HostInterface> find_interfaces(const Inventory& hosts, const std::string& target) override;
  std::vector<HostTopology> read_topology(const Inventory& hosts) override;
  bool ranks_are_local() const override { return true; }
  // A bind test here (net::free_ports_here).
  std::optional<Result<int>> master_port(const Host& host, int first, int count) override;

  Result<void> prepare(const Plan& plan, std::span<const RankLaunch> launches) override;
  // Call from the supervisor's thread (see spawn_rank about PDEATHSIG).
  Result<void> start(const RankLaunch& launch, RankEvents& events) override;
  void signal(int rank, int signo) override;
  // py-spy on the rank's host, onto its stderr (/proc/PID/fd/2).
  bool dump_stacks(int rank) override;
  void shutdown() override;

private:
  struct Child;
  void io_loop();
  void on_readable(Child& child, int which);
  void on_process_exit(Child& child);
  void close_stream(Child& child, int which);
  void report_if_done(Child& child);
  void wake();

  Lifeline lifeline_;
  bool lifeline_started_ = false;
  rlim_t nofile_soft_ = 0;  // the launcher's own soft limit, given to ranks
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Child>> children_;  // indexed by epoll tag
  bool stopping_ = false;
  std::thread io_thread_;
  std::mutex dump_mutex_;
  std::vector<std::thread> dumpers_;  // py-spy runs, joined by shutdown()
};

} // namespace ddl
