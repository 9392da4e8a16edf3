// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/host_access.hpp"
#include "backends/ssh/shim_probe.hpp"

namespace ddl {

// Hosts reached over ssh (ssh_probe.hpp): the ssh config's HostName for an
// alias, the GPU probe, `hosts --check` with [ssh] remote_ddl, the route and
// ports and topology read by a probe shell on the host.
class SshAccess final : public HostAccess {
public:
  // What stays between questions. connections: each host's connection and
  // its waiting shim, from the first probe to the launch, which starts the
  // host's first rank on it (the ssh backend; kept()). nothing: every
  // question connects and closes again (mpirun's rsh agent).
  enum class Keep { connections, nothing };
  SshAccess(const SshSection& ssh, Keep keep);

  Inventory resolve_addresses(Inventory hosts) override;
  Result<Inventory> probe_gpus(Inventory hosts) override;
  std::optional<std::vector<HostCheck>> check(const Inventory& hosts) override;
  // check()'s connection per host: an unreachable host fails.
  std::vector<std::string> preflight(const Inventory& hosts) override;
  // The ports in use there (/proc/net/tcp, tcp6): as find_interfaces read
  // them on rank 0's host, else asked of its kept shim (one is started).
  std::optional<Result<int>> master_port(const Host& host, int first, int count) override;
  std::vector<HostInterface> find_interfaces(const Inventory& hosts, const std::string& target) override;
  // Over find_interfaces' connections where there are some.
  std::optional<std::vector<HostTopology>> read_topology(const Inventory& hosts) override;
  // Keep::connections: over each host's kept connection and shim (one more
  // request there; a host whose connection failed is not asked again);
  // Keep::nothing: not counted (it would cost a connection).
  std::vector<std::optional<int>> gpu_counts(const Inventory& hosts) override;
  // [ssh] remote_ddl, else this binary's path.
  std::string ddl_path() const override;

  // Keep::connections: the connections kept, by host name, for the launch
  // to take and give back.
  std::unordered_map<std::string, SshConnection>& kept() { return kept_; }

private:
  // kept_'s connections of `hosts` (moved out; empty where none), and back.
  std::vector<SshConnection> take_kept(const Inventory& hosts);
  void keep(const Inventory& hosts, std::vector<SshConnection>& connections);

  SshSection ssh_;
  Keep keep_;
  std::unordered_map<std::string, SshConnection> kept_;
  // The ports in use on rank 0's host, read by find_interfaces' shell
  // there, for master_port (called after it) to use.
  std::string ports_host_;
  std::optional<std::set<int>> ports_in_use_;
};

} // namespace ddl
