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

std::vector<HostInterface> Backend::find_interfaces(const Inventory& /*hosts*/, const std::string& /*target*/) {
  return {};
}

std::string Backend::ddl_path() const { return own_executable_path(); }

std::string Backend::dry_run_text(std::span<const RankLaunch> /*launches*/) const { return {}; }

} // namespace ddl
