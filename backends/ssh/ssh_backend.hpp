// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/per_rank_backend.hpp"
#include "backends/ssh/host_link.hpp"
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
  Inventory resolve_addresses(Inventory hosts) override;
  Result<Inventory> probe_gpus(Inventory hosts) override;
  std::vector<HostCheck> check(const Inventory& hosts) override;
  // check()'s connection per host: an unreachable host fails.
  std::vector<std::string> preflight(const Inventory& hosts) override;
  // The ports in use there (/proc/net/tcp, tcp6): as find_interfaces read
  // them on rank 0's host, else asked of its kept shim (one is started).
  std::optional<Result<int>> master_port(const Host& host, int first, int count) override;
  std::vector<HostInterface> find_interfaces(const Inventory& hosts, const std::string& target) override;
  // Over find_interfaces' connections where there are some (kept for the launch).
  std::vector<HostTopology> read_topology(const Inventory& hosts) override;
  // [ssh] remote_ddl, else this binary's path.
  std::string ddl_path() const override;

  // The stack dumper on the rank's host, onto its stderr (through the shim).
  bool dump_stacks(int rank, DumpTool tool, Millis timeout) override;
  void shutdown() override;

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
  // kept_'s connections of `hosts` (moved out; empty where none), and back.
  std::vector<SshConnection> take_kept(const Inventory& hosts);
  void keep(const Inventory& hosts, std::vector<SshConnection>& connections);

  // Whether a connection of `ranks` ranks runs them through ddl's relay.
  bool wants_relay(std::size_t ranks) const;

  SshSection options_;
  bool restarts_ = false;
  std::vector<std::unique_ptr<HostLink>> links_;
  std::vector<std::size_t> rank_link_;  // rank -> index into links_
  Pending pending_;
  // Per host name, the connection (and waiting shim) of its probes, for the
  // first rank there, or of an earlier launch, for the next one.
  std::unordered_map<std::string, SshConnection> kept_;
  // The ports in use on rank 0's host, read by find_interfaces' shell
  // there, for master_port (called after it) to use.
  std::string ports_host_;
  std::optional<std::set<int>> ports_in_use_;
};

// Ranks one SSH connection carries at most (sshd's MaxSessions is 10).
inline constexpr int k_ranks_per_connection = 8;

} // namespace ddl
