// SPDX-License-Identifier: MIT
#pragma once

// Reaching hosts over SSH without launching anything: `ddl hosts --check`
// and the GPU probe of `slots = "gpus"`.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/ssh/shim_probe.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "src/launch/backend.hpp"
#include "src/util/error.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"  // SshSection

namespace ddl {

// Connects to every host (at most [ssh] fanout at once, each bounded by
// connect_timeout), verifies its key, authenticates, and runs a probe under
// the shim: is `remote_ddl` there, its `--version`, the GPU count. One
// entry per host, in order. With `kept`, each host's connection and shim
// (ask_shim) is taken from it where there is one and left in it.
std::vector<HostCheck> ssh_check_hosts(const SshSection& ssh, const std::string& remote_ddl,
                                       const Inventory& hosts, std::vector<SshConnection>* kept = nullptr);

// slots = "gpus": each host's slots and GPU list from its GPU count. Every
// host that cannot be probed or has no GPU is reported at once
// (ExitCode::launch).
// `kept` as for ssh_check_hosts.
Result<Inventory> ssh_probe_gpu_slots(const SshSection& ssh, Inventory hosts,
                                      std::vector<SshConnection>* kept = nullptr);

// Per host, its GPU count (as `hosts --check` counts them), a request to the
// shim of its connection in `connections` (connected first where there is
// none yet, and kept there for the launch; a host whose connection failed
// before is not asked again); nullopt where not counted.
std::vector<std::optional<int>> ssh_count_gpus(const SshSection& ssh, const Inventory& hosts,
                                               std::vector<SshConnection>& connections);

// Per host, the interface its own route to `target` leaves from (`ip -o
// route get` and `ip -o addr` there, a request to the shim); hosts that
// cannot be reached or asked say why. A connection already in
// `connections[i]` is asked instead of a new one; `connections` keeps each
// host's connection and its waiting shim (or why there is none), for the
// launch to start the host's first rank on.
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
// /proc/net/tcp. With `kept`, over that connection and shim (ask_shim).
std::optional<Result<int>> ssh_master_port(const SshSection& ssh, const Host& host, int first, int count,
                                           SshConnection* kept = nullptr);
// The master port given the ports in use on `host`: `first` checked, or
// (`first` 0) `count` free consecutive ones picked.
Result<int> master_port_among(const std::set<int>& used, const Host& host, int first, int count);

// [ssh] remote_ddl, else this binary's path.
std::string remote_ddl_path(const SshSection& ssh);


} // namespace ddl
