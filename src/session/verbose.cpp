// SPDX-License-Identifier: MIT
#include "src/session/verbose.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/launch/output.hpp"
#include "src/util/text.hpp"

namespace ddl::session {

namespace {

std::string id_list(const std::vector<int>& ids) {
  return ids.empty() ? "-" : fmt::format("{}", fmt::join(ids, ","));
}

// The argv as a shell would take it back, quoting only words that need it.
std::string quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& word : argv) {
    out += (out.empty() ? "" : " ") + shell_word(word);
  }
  return out;
}

} // namespace

void log_plan_hosts(const PlannedJob& planned) {
  if (!spdlog::should_log(spdlog::level::info)) {
    return;
  }
  spdlog::info("backend: {}", backend_shown(planned));
  for (const Host& host : planned.plan.hosts) {
    spdlog::info("host {}: address {}, {} slot{}, GPUs {}, from {}", host.name, login_address(host), host.slots,
                 host.slots == 1 ? "" : "s", id_list(host.gpus), host.source);
  }
}

void log_interfaces(const Plan& plan, const std::vector<HostInterface>& interfaces) {
  for (std::size_t h = 0; h < interfaces.size() && h < plan.hosts.size(); ++h) {
    const HostInterface& found = interfaces[h];
    if (!found.name.empty()) {
      spdlog::info("host {}: interface {} ({}): {}", plan.hosts[h].name, found.name, found.address, found.why);
    }
  }
}

void log_ports(const LaunchContext& ctx) {
  spdlog::info("ports: MASTER_PORT {}, rendezvous {}{}", ctx.master_port, ctx.rendezvous,
               ctx.horovod_gloo ? fmt::format(", Horovod gloo {}:{}", ctx.horovod_address, ctx.horovod_port) : "");
}

void log_rank_launches(const std::vector<RankLaunch>& launches, const std::vector<std::string>& secrets) {
  for (const RankLaunch& launch : launches) {
    spdlog::info("rank {} on {}: in {}: {}", launch.rank, launch.host.name, launch.workdir,
                 redact(quoted(launch.argv), secrets));
    if (spdlog::should_log(spdlog::level::debug)) {
      for (const auto& [name, value] : launch.env) {
        spdlog::debug("rank {} env {}={}", launch.rank, name, redact(value, secrets));
      }
    }
  }
}

} // namespace ddl::session
