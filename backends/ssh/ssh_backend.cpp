// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_backend.hpp"

#include <chrono>
#include <csignal>
#include <optional>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/shim.hpp"
#include "backends/ssh/host_link.hpp"
#include "backends/ssh/parallel.hpp"
#include "backends/ssh/shim_channel.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "backends/ssh/ssh_probe.hpp"
#include "backends/ssh/ssh_topology.hpp"
#include "src/render/binding.hpp"
#include "src/util/host_progress.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

// Opens one channel per rank, each running the shim with a check block: the
// workdir and the command must exist (exit 126 and 127 from the shim). They
// then wait for their payload, so that start() is a single write.
Result<HostLink::ReadyChannels> open_checked_channels(ssh_session session, const std::vector<int>& ranks,
                                                      const std::string& workdir, const std::string& program,
                                                      Millis timeout) {
  auto check = shim_check_payload(workdir, program);
  if (!check) {
    return fail(check.error());
  }
  HostLink::ReadyChannels channels;
  for (int rank : ranks) {
    auto channel = std::make_unique<ShimChannel>(session);
    if (auto started = channel->start(*check); !started) {
      return fail(started.error());
    }
    channels[rank] = std::move(channel);
  }
  auto all_settled = [&] {
    for (const auto& [rank, channel] : channels) {
      if (!channel->ready() && !channel->closed()) {
        return false;
      }
    }
    return true;
  };
  ssh_event event = ssh_event_new();
  ssh_event_add_session(event, session);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!all_settled() && std::chrono::steady_clock::now() < deadline && !stop::requested() &&
         (ssh_get_status(session) & (SSH_CLOSED | SSH_CLOSED_ERROR)) == 0) {
    ssh_event_dopoll(event, stop::wait_ms(100));
  }
  ssh_event_remove_session(event, session);
  ssh_event_free(event);
  if (stop::requested()) {
    return fail(stop::error("waiting for the preflight check"));
  }
  for (const auto& [rank, channel] : channels) {
    if (channel->ready()) {
      continue;
    }
    if (!channel->closed()) {
      std::size_t answered = 0;
      for (const auto& [other, state] : channels) {
        answered += state->ready() ? 1U : 0U;
      }
      return fail(ExitCode::launch,
                  fmt::format("the shim of rank {} did not answer within {:g}s ({} of {} did){}", rank,
                              static_cast<double>(timeout.count()) / 1000.0, answered, channels.size(),
                              channel->held_stderr().empty() ? "" : ": " + channel->held_stderr()));
    }
    int code = channel->exit_status().value_or(-1);
    if (code == 126) {
      return fail(ExitCode::launch, fmt::format("workdir {} does not exist", workdir));
    }
    if (code == 127) {
      return fail(ExitCode::launch, fmt::format("command not found: {}", program));
    }
    return fail(ExitCode::launch, fmt::format("the shim failed (exit {}): {}", code, channel->held_stderr()));
  }
  return channels;
}

// The launch of the first of `ranks` (all of one connection); a connection
// without ranks checks what the others run. `launches` is not empty.
const RankLaunch& first_launch_of(std::span<const RankLaunch> launches, const std::vector<int>& ranks) {
  for (const auto& launch : launches) {
    if (!ranks.empty() && launch.rank == ranks.front()) {
      return launch;
    }
  }
  return launches.front();
}

std::string host_label(const Host& host) {
  return host.address == host.name ? host.name : fmt::format("{} ({})", host.name, host.address);
}

} // namespace

SshBackend::SshBackend(const SshSection& options) : options_(options) {}

SshBackend::~SshBackend() { shutdown(); }

Inventory SshBackend::resolve_addresses(Inventory hosts) {
  return ssh_resolve_addresses(options_, std::move(hosts));
}

Result<Inventory> SshBackend::probe_gpus(Inventory hosts) { return ssh_probe_gpu_slots(options_, std::move(hosts)); }

std::vector<HostCheck> SshBackend::check(const Inventory& hosts) {
  return ssh_check_hosts(options_, ddl_path(), hosts);
}

std::vector<std::string> SshBackend::preflight(const Inventory& hosts) {
  auto checks = check(hosts);
  std::vector<std::string> problems(hosts.size());
  for (std::size_t i = 0; i < hosts.size() && i < checks.size(); ++i) {
    if (!checks[i].reachable) {
      problems[i] = "preflight: " + (checks[i].error.empty() ? std::string("not reachable") : checks[i].error);
    }
  }
  return problems;
}

std::optional<Result<int>> SshBackend::master_port(const Host& host, int first, int count) {
  if (ports_in_use_ && ports_host_ == host.name) {
    return master_port_among(*ports_in_use_, host, first, count);
  }
  return ssh_master_port(options_, host, first, count);
}

std::vector<HostInterface> SshBackend::find_interfaces(const Inventory& hosts, const std::string& target) {
  std::vector<SshConnection> connections(hosts.size());
  auto rank0 = std::ranges::find_if(hosts, [&](const Host& host) { return host.address == target; });
  std::optional<std::size_t> ports_on;
  ports_in_use_.reset();
  ports_host_.clear();
  if (rank0 != hosts.end()) {
    ports_on = static_cast<std::size_t>(rank0 - hosts.begin());
    ports_host_ = rank0->name;
  }
  auto found = ssh_find_interfaces(options_, hosts, target, connections, ports_on, &ports_in_use_);
  probed_.clear();
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    probed_[hosts[i].name] = std::move(connections[i]);
  }
  return found;
}

std::vector<HostTopology> SshBackend::read_topology(const Inventory& hosts) {
  std::vector<SshConnection> connections(hosts.size());
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (auto kept = probed_.find(hosts[i].name); kept != probed_.end()) {
      connections[i] = std::move(kept->second);
    }
  }
  auto found = ssh_read_topology(options_, hosts, connections);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    probed_[hosts[i].name] = std::move(connections[i]);
  }
  return found;
}

std::string SshBackend::ddl_path() const { return remote_ddl_path(options_); }

Result<void> SshBackend::prepare(const Plan& plan, std::span<const RankLaunch> launches) {
  if (launches.empty()) {
    return fail(ExitCode::launch, "ssh: no ranks to start");
  }
  // Connections per host: one per k_ranks_per_connection ranks.
  std::vector<int> ranks_on_host(plan.hosts.size(), 0);
  rank_link_.assign(plan.ranks.size(), 0);
  for (const auto& slot : plan.ranks) {
    ++ranks_on_host[slot.host_index];
  }
  struct Task {
    std::size_t host;
    int connection;
  };
  std::vector<Task> tasks;
  std::vector<std::size_t> first_link(plan.hosts.size(), 0);
  for (std::size_t h = 0; h < plan.hosts.size(); ++h) {
    first_link[h] = tasks.size();
    int connections = std::max(1, (ranks_on_host[h] + k_ranks_per_connection - 1) / k_ranks_per_connection);
    for (int c = 0; c < connections; ++c) {
      tasks.push_back({h, c});
    }
  }
  // The ranks of each connection, by rank.
  std::vector<std::vector<int>> task_ranks(tasks.size());
  for (const auto& slot : plan.ranks) {
    task_ranks[first_link[slot.host_index] + static_cast<std::size_t>(slot.local_rank / k_ranks_per_connection)]
        .push_back(slot.rank);
  }
  std::vector<SshSessionPtr> sessions(tasks.size());
  std::vector<HostLink::ReadyChannels> ready(tasks.size());
  std::vector<std::string> problems(tasks.size());
  std::vector<std::optional<Error>> stopped(tasks.size());  // Ctrl-C, the deadline
  Millis check_timeout = remote_answer_timeout(options_);
  // The first connection to each host may be the one find_interfaces made.
  std::vector<std::optional<SshConnection>> probed(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    auto found = tasks[i].connection == 0 ? probed_.find(plan.hosts[tasks[i].host].name) : probed_.end();
    if (found != probed_.end()) {
      probed[i] = std::move(found->second);
      probed_.erase(found);
    }
  }
  probed_.clear();
  auto open = [&](std::size_t i) -> Result<SshSessionPtr> {
    if (!probed[i]) {
      return ssh_open(options_, plan.hosts[tasks[i].host]);
    }
    if (!probed[i]->session) {
      return fail(ExitCode::launch, probed[i]->error);
    }
    return std::move(probed[i]->session);
  };
  std::vector<std::string> task_hosts;
  for (const auto& task : tasks) {
    task_hosts.push_back(plan.hosts[task.host].name);
  }
  auto ready_one = [&](std::size_t i) {
    if (stop::requested()) {
      problems[i] = stop::error("connecting").message;
      return;
    }
    auto session = open(i);
    if (!session) {
      problems[i] = session.error().message;
      stopped[i] = stop::is_stop_error(session.error()) ? std::optional(session.error()) : std::nullopt;
      return;
    }
    const RankLaunch& first = first_launch_of(launches, task_ranks[i]);
    std::string program = first.argv.empty() ? std::string("sh") : first.argv.front();
    auto channels = open_checked_channels(session->get(), task_ranks[i], first.workdir, program, check_timeout);
    if (!channels) {
      problems[i] = channels.error().message;
      stopped[i] = stop::is_stop_error(channels.error()) ? std::optional(channels.error()) : std::nullopt;
      return;
    }
    ready[i] = std::move(*channels);
    sessions[i] = std::move(*session);
  };
  HostProgress progress("ready", std::move(task_hosts));
  for_each_parallel(tasks.size(), options_.fanout, [&](std::size_t i) {
    progress.begin(i);
    ready_one(i);
    progress.end(i);
  });

  for (const auto& stop_error : stopped) {
    if (stop_error) {
      return fail(*stop_error);  // the phase it cut short
    }
  }
  std::string report;
  int failed_hosts = 0;
  for (std::size_t h = 0; h < plan.hosts.size(); ++h) {
    for (std::size_t i = first_link[h]; i < tasks.size() && tasks[i].host == h; ++i) {
      if (!problems[i].empty()) {
        report += fmt::format("\n  {}: {}", host_label(plan.hosts[h]), problems[i]);
        ++failed_hosts;
        break;
      }
    }
  }
  if (failed_hosts > 0) {
    return fail(ExitCode::launch, fmt::format("cannot start on {} of {} host{}:{}", failed_hosts,
                                              plan.hosts.size(), plan.hosts.size() == 1 ? "" : "s", report));
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    links_.push_back(
        std::make_unique<HostLink>(plan.hosts[tasks[i].host].name, std::move(sessions[i]), std::move(ready[i])));
  }
  for (const auto& slot : plan.ranks) {
    auto index = static_cast<std::size_t>(slot.rank);
    if (index < rank_link_.size()) {
      rank_link_[index] = first_link[slot.host_index] +
                          static_cast<std::size_t>(slot.local_rank / k_ranks_per_connection);
    }
  }
  spdlog::info("ssh: {} connection{} to {} host{} ready", links_.size(), links_.size() == 1 ? "" : "s",
               plan.hosts.size(), plan.hosts.size() == 1 ? "" : "s");
  return {};
}

Result<void> SshBackend::start(const RankLaunch& launch, RankEvents& events) {
  auto index = static_cast<std::size_t>(launch.rank);
  if (index >= rank_link_.size() || links_.empty()) {
    return fail(ExitCode::launch, fmt::format("rank {} was not prepared", launch.rank));
  }
  ShimJob job{launch.env, launch.workdir, pinned_argv(launch.argv, launch.cpus, ddl_path()), launch.grace,
              k_shim_heartbeat_period};
  auto payload = shim_payload(job);
  if (!payload) {
    return fail(payload.error());
  }
  links_[rank_link_[index]]->start(launch.rank, std::move(*payload), events);
  return {};
}

void SshBackend::signal(int rank, int signo) {
  auto index = static_cast<std::size_t>(rank);
  if (index >= rank_link_.size() || links_.empty()) {
    return;
  }
  if (auto line = shim_signal_line(signo)) {
    links_[rank_link_[index]]->send(rank, std::move(*line));
  }
}

bool SshBackend::dump_stacks(int rank) {
  auto index = static_cast<std::size_t>(rank);
  if (index >= rank_link_.size() || links_.empty()) {
    return false;
  }
  links_[rank_link_[index]]->send(rank, std::string(k_shim_dump_line));
  return true;
}

void SshBackend::shutdown() {
  probed_.clear();
  for (auto& link : links_) {
    link->close();
  }
  links_.clear();
}

} // namespace ddl
