// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/per_rank_backend.hpp"
#include "backends/ssh/host_link.hpp"
#include "backends/ssh/ssh_access.hpp"
#include "backends/ssh/ssh_probe.hpp"

namespace ddl {

// Ranks on remote hosts over SSH (libssh), each under the shim
// (backends/shim.hpp) on its own channel: a channel of ddl's relay on the
// host (relay_session.hpp) where a connection carries several ranks (or the
// job may restart) and the host has this ddl at [ssh] remote_ddl, so that
// they share the login shell of the host's probes; else a channel (and login
// shell) of its own. A sweep's trial starts no relay of its own: its
// channels are the sweep's broker's, on the broker's relay.
// The preflight connects to every
// host in parallel (at most [ssh] fanout at once; one connection per
// k_ranks_per_connection ranks), verifies host keys, authenticates and
// checks that the workdir and the program the ranks run (argv[0], /bin/sh
// for a string command) exist; every failing host is reported at once
// (ExitCode::launch).
class SshBackend final : public PerRankBackend {
public:
  // `restarts`: the job may restart (max_restarts > 0), so a host of one
  // rank gets the relay too, and a restart starts no login shell.
  explicit SshBackend(const SshSection& options, bool restarts = false);
  ~SshBackend() override;

  std::string_view name() const override { return "ssh"; }
  // The host questions: SshAccess, which keeps each host's connection and
  // shim for the launch.
  ContainerHost container_host() const override { return ContainerHost::guarded; }
  bool shares_sweep_broker() const override { return true; }

  // The stack dumper on the rank's host, onto its stderr (through the shim).
  bool dump_stacks(int rank, DumpTool tool, Millis timeout) override;
  void shutdown() override;
  // Each host's relay, started for one rank too, is kept for the next launch.
  void expect_another_launch() override { another_launch_ = true; }

protected:
  Result<void> prepare_gang(const Plan& plan, std::span<const RankLaunch> launches) override;
  std::vector<std::size_t> preflight_units(const Plan& plan) override;
  Result<void> preflight_unit(std::size_t unit, const Plan& plan, std::span<const RankLaunch> launches) override;
  std::string preflight_passed(const Plan& plan) override;
  bool unit_unreached(std::size_t unit) const override;
  int preflight_fanout() const override { return options_.fanout; }
  // "gpu-a (10.0.0.7)" when the address differs from the name.
  std::string host_label(const Host& host) const override;
  Result<void> start_rank(const RankLaunch& launch, RankEvents& events) override;
  void signal_rank(int rank, int signo) override;

private:
  // The preflight's connections while it runs, by unit.
  struct Pending {
    std::vector<std::size_t> hosts;                     // host index
    std::vector<std::vector<int>> ranks;                // the ranks it carries
    std::vector<std::optional<SshConnection>> probed;   // find_interfaces' connection
    std::vector<HostSessionPtr> sessions;
    std::vector<std::unique_ptr<RelaySession>> relays;  // over sessions; null where none
    std::vector<HostLink::ReadyChannels> ready;          // over relays, else sessions
    std::vector<char> unreached;  // its connect or channels failed (not a check)
  };
  Result<SshConnection> open_unit(std::size_t unit, const Plan& plan);
  void drop_pending();

  // Whether a connection of `ranks` ranks runs them through ddl's relay.
  bool wants_relay(std::size_t ranks) const;

  SshSection options_;
  bool restarts_ = false;
  bool another_launch_ = false;  // expect_another_launch()
  // Per host name, the connection (and waiting shim) of its probes, for the
  // first rank there, or of an earlier launch, for the next one.
  std::unordered_map<std::string, SshConnection>& kept_;
  std::vector<std::unique_ptr<HostLink>> links_;
  std::vector<std::size_t> rank_link_;  // rank -> index into links_
  Pending pending_;
};

// Ranks one SSH connection carries at most (sshd's MaxSessions is 10).
inline constexpr int k_ranks_per_connection = 8;

} // namespace ddl
