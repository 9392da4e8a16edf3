// SPDX-License-Identifier: MIT
#pragma once

// Reaching hosts over SSH without launching anything: `ddl hosts --check`
// and the GPU probe of `slots = "gpus"`.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/ssh/ssh_connect.hpp"
#include "src/launch/backend.hpp"
#include "src/util/error.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"  // SshSection

namespace ddl {

// Connects to every host (at most [ssh] fanout at once, each bounded by
// connect_timeout), verifies its key, authenticates, and runs a probe under
// the shim: is `remote_ddl` there, its `--version`, the GPU count. One
// entry per host, in order.
std::vector<HostCheck> ssh_check_hosts(const SshSection& ssh, const std::string& remote_ddl,
                                       const Inventory& hosts);

// slots = "gpus": each host's slots and GPU list from its GPU count. Every
// host that cannot be probed or has no GPU is reported at once
// (ExitCode::launch).
Result<Inventory> ssh_probe_gpu_slots(const SshSection& ssh, Inventory hosts);

// One connection to a host: open, or why it could not be made.
struct SshConnection {
  SshSessionPtr session;
  std::string error;
};

// Per host, the interface its own route to `target` leaves from (`ip -o
// route get` and `ip -o addr` there, under the shim); hosts that cannot be
// reached or asked say why. A session already in `connections[i]` (the
// master port probe's) is asked instead of a new one; `connections` gets each
// host's connection (or why there is none), for the launch to use instead of
// a second one.
// With `ports_on` (an index into hosts: rank 0's), the same shell there
// also lists the ports in use (as ssh_master_port reads them) into `ports`:
// one login shell fewer before the launch.
std::vector<HostInterface> ssh_find_interfaces(const SshSection& ssh, const Inventory& hosts,
                                              const std::string& target, std::vector<SshConnection>& connections,
                                              std::optional<std::size_t> ports_on = std::nullopt,
                                              std::optional<std::set<int>>* ports = nullptr);

// Hosts whose address is only their name get the ssh config's HostName for
// it (an alias "node1" becomes 198.18.0.1), as ssh itself would connect.
Inventory ssh_resolve_addresses(const SshSection& ssh, Inventory hosts);

// torch.master_port on `host`: the ports in use there, read from
// /proc/net/tcp and /proc/net/tcp6 over one session, then `first` checked
// against them, or (`first` 0) `count` unused consecutive ports picked
// (net::pick_unused_ports). A port in use is an error (ExitCode::launch)
// naming the host. nullopt when the host cannot be reached (the launch's
// own preflight then reports it with every other host) or has no
// /proc/net/tcp.
std::optional<Result<int>> ssh_master_port(const SshSection& ssh, const Host& host, int first, int count);
// The master port given the ports in use on `host`: `first` checked, or
// (`first` 0) `count` free consecutive ones picked.
Result<int> master_port_among(const std::set<int>& used, const Host& host, int first, int count);

// [ssh] remote_ddl, else this binary's path.
std::string remote_ddl_path(const SshSection& ssh);


} // namespace ddl
