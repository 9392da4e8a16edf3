// SPDX-License-Identifier: MIT
#include "src/launch/backend.hpp"

#include <fmt/core.h>

#include "src/util/process.hpp"

namespace ddl {

std::vector<HostCheck> Backend::check(const Inventory& hosts) {
  HostCheck unsupported;
  unsupported.error = fmt::format("--check is not available for the {} backend", name());
  return std::vector<HostCheck>(hosts.size(), unsupported);
}

std::optional<Result<int>> Backend::master_port(const Host& /*host*/, int /*first*/, int /*count*/) {
  return std::nullopt;
}

std::optional<std::string> Backend::read_rank_file(const RankLaunch& /*launch*/, const std::string& /*path*/,
                                                  std::chrono::system_clock::time_point /*since*/,
                                                  std::size_t /*max_bytes*/) {
  return std::nullopt;
}

std::vector<HostInterface> Backend::find_interfaces(const Inventory& /*hosts*/, const std::string& /*target*/) {
  return {};
}

std::vector<HostTopology> Backend::read_topology(const Inventory& hosts) {
  return std::vector<HostTopology>(hosts.size(),
                                   topology_unknown(fmt::format("the {} backend does not read host topology", name())));
}

std::string Backend::ddl_path() const { return own_executable_path(); }

std::string Backend::dry_run_text(std::span<const RankLaunch> /*launches*/) { return {}; }

bool Backend::dump_stacks(int, DumpTool, Millis) { return false; }

std::vector<LeftOutHost> Backend::unreached_hosts() const { return {}; }

} // namespace ddl
