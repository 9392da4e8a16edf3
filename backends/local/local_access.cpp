// SPDX-License-Identifier: MIT
#include "backends/local/local_access.hpp"

#include <sys/stat.h>

#include <fmt/core.h>

#include "ddl_version.hpp"
#include "src/inventory/local_topology.hpp"
#include "src/util/net.hpp"
#include "src/util/own_path.hpp"

namespace ddl {

namespace {

HostInterface interface_toward(const std::string& target) {
  net::Route route = net::route_to(target);
  if (route.end != net::RouteEnd::found) {
    return interface_unknown(fmt::format("no route to {}: {}", target, route.why));
  }
  std::string name = net::interface_holding(route.address);
  if (name.empty()) {
    return interface_unknown(fmt::format("no interface holds {}, where the route to {} leaves from",
                                         route.address, target));
  }
  return interface_found(std::move(name), route.address, target);
}

} // namespace

Result<Inventory> LocalAccess::probe_gpus(Inventory hosts) {
  int count = local_gpu_count();
  if (count <= 0) {
    return fail(ExitCode::launch, "slots = \"gpus\": no GPU found on this machine");
  }
  for (auto& host : hosts) {
    host.slots = count;
    host.gpus.clear();
    for (int g = 0; g < count; ++g) {
      host.gpus.push_back(g);
    }
  }
  return hosts;
}

std::optional<std::vector<HostCheck>> LocalAccess::check(const Inventory& hosts) {
  HostCheck check;
  check.reachable = true;
  check.ddl_version = DDL_VERSION;
  check.gpu_count = local_gpu_count();
  return std::vector<HostCheck>(hosts.size(), check);
}

std::vector<HostInterface> LocalAccess::find_interfaces(const Inventory& hosts, const std::string& target) {
  return std::vector<HostInterface>(hosts.size(), interface_toward(target));
}

std::optional<std::vector<HostTopology>> LocalAccess::read_topology(const Inventory& hosts) {
  return std::vector<HostTopology>(hosts.size(), hosts.empty() ? HostTopology{} : local_topology());
}

std::optional<Result<int>> LocalAccess::master_port(const Host& /*host*/, int first, int count) {
  return net::free_ports_here(first, count);
}

std::optional<std::string> LocalAccess::read_rank_file(const std::string& path,
                                                       std::chrono::system_clock::time_point since,
                                                       std::size_t max_bytes) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return std::nullopt;
  }
  // Whole seconds: a file written in the same second as `since` counts.
  if (info.st_mtim.tv_sec < std::chrono::system_clock::to_time_t(since)) {
    return std::nullopt;
  }
  // Never through a link, nor another user's file: its text reaches the summary.
  auto text = read_own_file(path, "rank file", max_bytes);
  if (!text) {
    return std::nullopt;
  }
  return std::move(*text);
}

} // namespace ddl
