// SPDX-License-Identifier: MIT
#include "src/session/host_probes.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/render/render_env.hpp"
#include "src/render/render_interfaces.hpp"
#include "src/render/frameworks/torch.hpp"
#include "src/session/verbose.hpp"
#include "src/util/net_resolve.hpp"
#include "src/util/signals.hpp"

namespace ddl::session {

namespace {

// The backend's find_interfaces; without DNS (a dry run) only on the hosts
// whose address is known without it, the others shown as not asked.
std::vector<HostInterface> interfaces_toward(Backend& backend, const Inventory& hosts, const std::string& target) {
  if (net::name_lookup() == net::NameLookup::resolver) {
    return backend.find_interfaces(hosts, target);
  }
  // Every host would look rank 0's address up itself.
  const bool target_known = net::known_without_dns(target);
  Inventory asked;
  for (const Host& host : hosts) {
    if (target_known && net::known_without_dns(host.address)) {
      asked.push_back(host);
    }
  }
  auto answers = asked.empty() ? std::vector<HostInterface>{} : backend.find_interfaces(asked, target);
  if (!asked.empty() && answers.empty()) {
    return answers;  // the backend does not look (mpirun, slurm): no DNS was the reason for nothing
  }
  std::vector<HostInterface> found;
  std::size_t next = 0;
  for (const Host& host : hosts) {
    if (target_known && net::known_without_dns(host.address) && next < answers.size()) {
      found.push_back(std::move(answers[next++]));
    } else {
      found.push_back(interface_unknown(
          fmt::format("not asked: a dry run does not look {} up in DNS", target_known ? host.address : target)));
    }
  }
  return found;
}

// One warning per reason, naming its hosts (the first few of many): a dry
// run of a thousand hosts has one reason for them all.
void warn_hosts_without_interface(const Plan& plan, const std::vector<HostInterface>& found,
                                  const std::string& target) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (std::size_t h = 0; h < found.size() && h < plan.hosts.size(); ++h) {
    if (!found[h].name.empty() || found[h].unreachable) {
      continue;
    }
    auto same = std::ranges::find_if(by_reason, [&](const auto& entry) { return entry.first == found[h].why; });
    if (same == by_reason.end()) {
      by_reason.emplace_back(found[h].why, std::vector<std::string>{});
      same = std::prev(by_reason.end());
    }
    same->second.push_back(plan.hosts[h].name);
  }
  constexpr std::size_t k_named = 3;
  for (const auto& [why, hosts] : by_reason) {
    std::string names;
    for (std::size_t i = 0; i < hosts.size() && i < k_named; ++i) {
      names += (i == 0 ? "" : ", ") + hosts[i];
    }
    if (hosts.size() > k_named) {
      names = fmt::format("{} hosts ({} and {} more)", hosts.size(), names, hosts.size() - k_named);
    }
    spdlog::warn("{}: no interface toward rank 0 ({}): {}; GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME and "
                 "HOROVOD_GLOO_IFACE are not set there",
                 names, target, why);
  }
}

} // namespace

std::string rank0_address(const Plan& plan) {
  return plan.hosts.at(plan.ranks.empty() ? 0 : plan.ranks.front().host_index).address;
}

Result<std::vector<HostInterface>> job_interfaces(const JobSpec& job, Backend& backend, const Plan& plan) {
  if (std::ranges::all_of(k_interface_variables, [&](std::string_view name) { return user_sets_env(job, name); })) {
    return std::vector<HostInterface>{};
  }
  const std::string target = rank0_address(plan);
  auto found = interfaces_toward(backend, plan.hosts, target);
  if (stop::requested()) {
    return fail(stop::error("probing each host's network interface"));
  }
  log_interfaces(plan, found);
  warn_hosts_without_interface(plan, found, target);
  return found;
}

Result<std::vector<HostTopology>> job_topologies(const JobSpec& job, Backend& backend, const Plan& plan) {
  if (job.launch.bind == CpuBind::none) {
    return std::vector<HostTopology>{};
  }
  auto found = backend.read_topology(plan.hosts);
  if (stop::requested()) {
    return fail(stop::error("reading each host's CPU topology"));
  }
  for (std::size_t h = 0; h < found.size() && h < plan.hosts.size(); ++h) {
    if (!found[h].known()) {
      spdlog::warn("{}: cannot read the CPU topology ({}); its ranks run unbound", plan.hosts[h].name, found[h].why);
    }
  }
  return found;
}

Result<void> unbind_absent_gpus(const JobSpec& job, Backend& backend, Plan& plan) {
  if (!job.launch.bind_gpus) {
    return {};
  }
  Inventory asked;
  std::vector<std::size_t> index;
  for (std::size_t h = 0; h < plan.hosts.size(); ++h) {
    if (!gpus_known(plan.hosts[h])) {
      asked.push_back(plan.hosts[h]);
      index.push_back(h);
    }
  }
  if (asked.empty()) {
    return {};
  }
  const auto counts = backend.gpu_counts(asked);
  if (stop::requested()) {
    return fail(stop::error("counting each host's GPUs"));
  }
  for (std::size_t i = 0; i < counts.size() && i < index.size(); ++i) {
    if (counts[i] == 0) {
      spdlog::info("{}: no GPU found there; its ranks get none (no CUDA_VISIBLE_DEVICES)", plan.hosts[index[i]].name);
      mark_no_gpus(plan, index[i]);
    }
  }
  return {};
}

Result<int> launch_master_port(const JobSpec& job, Backend& backend, const Plan& plan) {
  const int first = job.torch.master_port;
  const int count = master_ports_needed(job);
  if (count == 0) {
    return first;
  }
  auto checked = backend.master_port(plan.hosts.front(), first, count);
  if (!checked) {
    return first != 0 ? first : k_torch_default_port;
  }
  if (!*checked) {
    return fail(ExitCode::launch, "torch.master_port: " + checked->error().message);
  }
  return **checked;
}

} // namespace ddl::session
