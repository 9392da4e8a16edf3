// SPDX-License-Identifier: MIT
#pragma once

#include "backends/host_access.hpp"

namespace ddl {

// Every host is this machine (the local backend): its GPU count gives every
// host its slots, `hosts --check` finds this ddl and this machine's GPUs,
// the interface is this machine's own route to rank 0, the same for every
// host, the master port is a bind test here, and the ranks' files are read
// here.
class LocalAccess final : public HostAccess {
public:
  Result<Inventory> probe_gpus(Inventory hosts) override;
  std::optional<std::vector<HostCheck>> check(const Inventory& hosts) override;
  std::vector<HostInterface> find_interfaces(const Inventory& hosts, const std::string& target) override;
  std::optional<std::vector<HostTopology>> read_topology(const Inventory& hosts) override;
  std::optional<Result<int>> master_port(const Host& host, int first, int count) override;
  // Read here: never through a link, nor another user's file.
  std::optional<std::string> read_rank_file(const std::string& path, std::chrono::system_clock::time_point since,
                                            std::size_t max_bytes) override;
};

} // namespace ddl
