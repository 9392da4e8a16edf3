// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/host_access.hpp"
#include "src/launch/backend.hpp"

namespace ddl {

// The skeleton of a backend that starts each rank itself (local, ssh,
// kubernetes), as PRRTE's plm/base is of its launchers: the gang-wide parts
// live here once, the backend supplies what differs per rank and per host.
//
//   prepare(): prepare_gang(), then one preflight fan-out over the units
//     preflight_units() names (a host, or one of its connections) at most
//     preflight_fanout() at once, with one status line (HostProgress,
//     "ready"), then one report of every host that failed ("cannot start on
//     N of M hosts:" and a line per host), or the backend's ready line (-v).
//   start(): start_rank() for each rank in order; Ctrl-C or the deadline
//     between two ranks stops it there.
//   signal_all(): signal_rank() for each rank started and not yet ended.
//   The host questions (addresses, GPU probe, check, preflight, interfaces,
//     topology, GPU counts, master port, rank files, the ddl binary there): the
//     backend's HostAccess.
class PerRankBackend : public Backend {
public:
  explicit PerRankBackend(std::unique_ptr<HostAccess> access) : access_(std::move(access)) {}
  // A backend that asks its hosts nothing (HostAccess's defaults).
  PerRankBackend() : PerRankBackend(std::make_unique<HostAccess>()) {}

  Inventory resolve_addresses(Inventory hosts) final { return access_->resolve_addresses(std::move(hosts)); }
  Result<Inventory> probe_gpus(Inventory hosts) final { return access_->probe_gpus(std::move(hosts)); }
  std::vector<HostCheck> check(const Inventory& hosts) final;
  std::vector<std::string> preflight(const Inventory& hosts) final { return access_->preflight(hosts); }
  std::vector<HostInterface> find_interfaces(const Inventory& hosts, const std::string& target) final {
    return access_->find_interfaces(hosts, target);
  }
  std::vector<HostTopology> read_topology(const Inventory& hosts) final;
  std::vector<std::optional<int>> gpu_counts(const Inventory& hosts) final { return access_->gpu_counts(hosts); }
  std::optional<Result<int>> master_port(const Host& host, int first, int count) final {
    return access_->master_port(host, first, count);
  }
  std::optional<std::string> read_rank_file(const RankLaunch& /*launch*/, const std::string& path,
                                            std::chrono::system_clock::time_point since,
                                            std::size_t max_bytes) final {
    return access_->read_rank_file(path, since, max_bytes);
  }
  std::string ddl_path() const final { return access_->ddl_path(); }

  Result<void> prepare(const Plan& plan, std::span<const RankLaunch> launches) final;
  std::vector<LeftOutHost> unreached_hosts() const final { return unreached_; }
  GangStart start(std::span<const RankLaunch> launches, RankEvents& events) final;
  void signal_all(int signo) final;
  bool starts_ranks_alone() const final { return true; }

protected:
  HostAccess& host_access() { return *access_; }

  // How the preflight report names what it reached.
  struct PreflightWords {
    std::string_view preposition = "on";  // "cannot start on 2 of 5 hosts"
    std::string_view noun = "host";
  };

  // Before the fan-out: what the gang needs as a whole (the local backend's
  // open files and lifeline). Default: nothing.
  virtual Result<void> prepare_gang(const Plan& plan, std::span<const RankLaunch> launches);
  // The preflight's units, each the index of its host in plan.hosts, in
  // host order (ssh: one per connection). Default: one per host.
  virtual std::vector<std::size_t> preflight_units(const Plan& plan);
  // One unit's preflight, on a thread of the fan-out: reach the host and
  // check what `launches` need there. An error is the host's problem; a stop
  // error (Ctrl-C, the deadline) ends prepare() with it. Default: ok.
  virtual Result<void> preflight_unit(std::size_t unit, const Plan& plan, std::span<const RankLaunch> launches);
  // After the unit's preflight failed: whether its host could not be
  // reached (a connect or channel failure, not a missing command).
  // Default: false.
  virtual bool unit_unreached(std::size_t /*unit*/) const { return false; }
  // After every unit passed: keep what the units made. Returns the ready
  // line logged under -v ("" none). Default: "".
  virtual std::string preflight_passed(const Plan& plan);
  virtual int preflight_fanout() const { return 16; }
  virtual PreflightWords preflight_words() const { return {}; }
  // How the report names a host ("gpu-a", "pod trainer-0").
  virtual std::string host_label(const Host& host) const { return host.name; }

  // Starts one rank; `events` hears its start, output and end.
  virtual Result<void> start_rank(const RankLaunch& launch, RankEvents& events) = 0;
  // `signo` to one running rank's process group.
  virtual void signal_rank(int rank, int signo) = 0;

private:
  // Passes the events on, keeping which ranks have ended (signal_all skips them).
  class Ends final : public RankEvents {
  public:
    void reset(std::size_t world, RankEvents& events);
    void started(int rank, long pid) override { events_->started(rank, pid); }
    void output(int rank, Stream stream, std::string_view bytes) override { events_->output(rank, stream, bytes); }
    void exited(int rank, const RankExit& how) override;
    void mark(int rank, bool running);
    std::vector<int> running() const;

  private:
    RankEvents* events_ = nullptr;
    mutable std::mutex mutex_;
    std::vector<char> running_;
  };

  std::unique_ptr<HostAccess> access_;
  Ends ends_;
  std::vector<LeftOutHost> unreached_;  // of the last prepare()
};

} // namespace ddl
