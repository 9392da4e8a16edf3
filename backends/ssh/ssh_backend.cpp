// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_backend.hpp"

#include <algorithm>
#include <csignal>
#include <optional>

#include <fmt/core.h>

#include "backends/shim.hpp"
#include "src/launch/stdin_feed.hpp"
#include "backends/stack_dump.hpp"
#include "backends/ssh/host_link.hpp"
#include "backends/ssh/relay_session.hpp"
#include "backends/ssh/shim_channel.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "backends/ssh/ssh_probe.hpp"
#include "src/render/binding.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

// Opens one channel per rank, each running the shim with a check block: the
// workdir and the command must exist (exit 126 and 127 from the shim). They
// then wait for their payload, so that start() is a single write.
// `check_answered` tells a failed check (the shim's exit status) from a channel
// that failed or never answered.
// The first rank's channel is `probed`, the shim that answered the probes,
// when there is one.
Result<HostLink::ReadyChannels> open_checked_channels(HostSession& session, const std::vector<int>& ranks,
                                                      std::unique_ptr<ShimChannel> probed,
                                                      const std::string& workdir, const std::string& program,
                                                      Millis timeout, bool& check_answered) {
  check_answered = false;
  auto check = shim_check_payload(workdir, program);
  if (!check) {
    return fail(check.error());
  }
  HostLink::ReadyChannels channels;
  for (int rank : ranks) {
    if (probed && !probed->closed()) {
      if (auto sent = probed->send_payload(*check); !sent) {
        return fail(sent.error());
      }
      channels[rank] = std::move(probed);
      continue;
    }
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
  poll_until(session, timeout, all_settled);
  if (stop::requested()) {
    return fail(stop::error("waiting for the preflight check"));
  }
  for (const auto& [rank, channel] : channels) {
    if (channel->ready()) {
      continue;
    }
    if (!channel->closed() && session.closed()) {  // poll_until ended early: the connection (or relay) went
      const std::string why = session.error();
      return fail(ExitCode::launch, fmt::format("the connection closed before the shim of rank {} answered: {}", rank,
                                                why.empty() ? "host not answering" : why));
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
    check_answered = channel->exit_status().has_value();
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

// The host questions' access, which keeps each host's connection and shim
// for the launch.
std::unique_ptr<SshAccess> keeping_access(const SshSection& options) {
  return std::make_unique<SshAccess>(options, SshAccess::Keep::connections);
}

} // namespace

SshBackend::SshBackend(const SshSection& options, bool restarts)
    : PerRankBackend(keeping_access(options)), options_(options), restarts_(restarts),
      kept_(static_cast<SshAccess&>(host_access()).kept()) {}

bool SshBackend::wants_relay(std::size_t ranks) const {
  return options_.broker.empty() && (ranks > 1 || (ranks == 1 && (restarts_ || another_launch_)));
}

SshBackend::~SshBackend() {
  shutdown();
  kept_.clear();
}

Result<void> SshBackend::prepare_gang(const Plan& /*plan*/, std::span<const RankLaunch> launches) {
  if (launches.empty()) {
    return fail(ExitCode::launch, "ssh: no ranks to start");
  }
  return {};
}

// One connection per k_ranks_per_connection ranks of a host, in host order.
std::vector<std::size_t> SshBackend::preflight_units(const Plan& plan) {
  std::vector<int> ranks_on_host(plan.hosts.size(), 0);
  for (const auto& slot : plan.ranks) {
    ++ranks_on_host[slot.host_index];
  }
  drop_pending();
  std::vector<std::size_t> first_link(plan.hosts.size(), 0);
  for (std::size_t h = 0; h < plan.hosts.size(); ++h) {
    first_link[h] = pending_.hosts.size();
    int connections = std::max(1, (ranks_on_host[h] + k_ranks_per_connection - 1) / k_ranks_per_connection);
    for (int c = 0; c < connections; ++c) {
      pending_.hosts.push_back(h);
      // The first connection to each host may be the one its probes made.
      auto found = c == 0 ? kept_.find(plan.hosts[h].name) : kept_.end();
      pending_.probed.emplace_back();
      if (found != kept_.end()) {
        pending_.probed.back() = std::move(found->second);
        kept_.erase(found);
      }
    }
  }
  // A host left out of the plan keeps its connection, not its shim.
  for (auto& [name, unused] : kept_) {
    unused.shim.reset();
  }
  pending_.ranks.resize(pending_.hosts.size());
  rank_link_.assign(plan.ranks.size(), 0);
  for (const auto& slot : plan.ranks) {
    std::size_t link = first_link[slot.host_index] + static_cast<std::size_t>(slot.local_rank / k_ranks_per_connection);
    pending_.ranks[link].push_back(slot.rank);
    if (static_cast<std::size_t>(slot.rank) < rank_link_.size()) {
      rank_link_[static_cast<std::size_t>(slot.rank)] = link;
    }
  }
  pending_.sessions.resize(pending_.hosts.size());
  pending_.relays.resize(pending_.hosts.size());
  pending_.ready.resize(pending_.hosts.size());
  pending_.unreached.assign(pending_.hosts.size(), 0);
  return pending_.hosts;
}

// The unit's connection: its host's probes' one (with their shim), else a
// new one.
Result<SshConnection> SshBackend::open_unit(std::size_t unit, const Plan& plan) {
  std::optional<SshConnection>& probed = pending_.probed[unit];
  // A kept connection that died since is reconnected once.
  if (probed && probed->session && !probed->session->closed()) {
    return std::move(*probed);
  }
  if (probed && !probed->session && !probed->error.empty()) {
    return fail(ExitCode::launch, probed->error);
  }
  auto session = ssh_open(options_, plan.hosts[pending_.hosts[unit]]);
  if (!session) {
    return fail(session.error());
  }
  SshConnection opened;
  opened.session = std::move(*session);
  return opened;
}

// Connects (or takes the probes' connection and shim), starts ddl's relay
// there for several ranks, and opens the checked channels of the
// connection's ranks.
Result<void> SshBackend::preflight_unit(std::size_t unit, const Plan& plan, std::span<const RankLaunch> launches) {
  auto connection = open_unit(unit, plan);
  if (!connection) {
    pending_.unreached[unit] = 1;
    return fail(connection.error());
  }
  const std::vector<int>& ranks = pending_.ranks[unit];
  connection->drop_ended_relay();
  if (connection->relay) {  // kept from the last launch (its shim, if any, is its command)
    pending_.relays[unit] = std::move(connection->relay);
  } else if (wants_relay(ranks.size())) {
    auto relay = start_relay_where_same_ddl(options_, plan.hosts[pending_.hosts[unit]], *connection);
    if (!relay) {
      pending_.unreached[unit] = connection->session && !connection->session->closed() ? 0 : 1;
      return fail(relay.error());
    }
    pending_.relays[unit] = std::move(*relay);
  }
  HostSession& channels_on = pending_.relays[unit] ? *pending_.relays[unit] : *connection->session;
  const RankLaunch& first = first_launch_of(launches, ranks);
  std::string program = first.argv.empty() ? std::string("sh") : first.argv.front();
  bool answered = false;
  auto channels = open_checked_channels(channels_on, ranks, std::move(connection->shim), first.workdir, program,
                                        remote_answer_timeout(options_), answered);
  if (!channels) {
    pending_.unreached[unit] = (answered || stop::is_stop_error(channels.error())) ? 0 : 1;
    pending_.relays[unit].reset();
    return fail(channels.error());
  }
  pending_.ready[unit] = std::move(*channels);
  pending_.sessions[unit] = std::move(connection->session);
  return {};
}

std::string SshBackend::preflight_passed(const Plan& plan) {
  const auto relays = std::ranges::count_if(pending_.relays, [](const auto& relay) { return relay != nullptr; });
  for (std::size_t i = 0; i < pending_.hosts.size(); ++i) {
    const Host& host = plan.hosts[pending_.hosts[i]];
    auto reconnect = [options = options_, host] { return ssh_open(options, host); };
    links_.push_back(std::make_unique<HostLink>(host.name, std::move(pending_.sessions[i]),
                                                std::move(pending_.relays[i]), std::move(pending_.ready[i]),
                                                reconnect));
  }
  pending_ = {};
  return fmt::format("ssh: {} connection{} to {} host{} ready{}", links_.size(), links_.size() == 1 ? "" : "s",
                     plan.hosts.size(), plan.hosts.size() == 1 ? "" : "s",
                     relays == 0 ? "" : fmt::format(", {} running ddl's relay", relays));
}

bool SshBackend::unit_unreached(std::size_t unit) const {
  return unit < pending_.unreached.size() && pending_.unreached[unit] != 0;
}

std::string SshBackend::host_label(const Host& host) const {
  return host.address == host.name ? host.name : fmt::format("{} ({})", host.name, host.address);
}

Result<void> SshBackend::start_rank(const RankLaunch& launch, RankEvents& events) {
  auto index = static_cast<std::size_t>(launch.rank);
  if (index >= rank_link_.size() || links_.empty()) {
    return fail(ExitCode::launch, fmt::format("rank {} was not prepared", launch.rank));
  }
  ShimJob job{launch.env, launch.workdir, pinned_argv(launch.argv, launch.cpus, ddl_path()), launch.grace,
              k_shim_heartbeat_period, launch.reads_stdin};
  auto payload = shim_payload(job);
  if (!payload) {
    return fail(payload.error());
  }
  HostLink* link = links_[rank_link_[index]].get();
  link->start(launch.rank, std::move(*payload), events);
  if (launch.reads_stdin) {
    attach_stdin(launch.rank, {[link, rank = launch.rank](std::string_view bytes) {
                                 link->send(rank, shim_stdin_frame(bytes));
                                 return true;
                               },
                               [link, rank = launch.rank] { link->send(rank, std::string(k_shim_stdin_eof_line)); }});
  }
  return {};
}

void SshBackend::signal_rank(int rank, int signo) {
  auto index = static_cast<std::size_t>(rank);
  if (index >= rank_link_.size() || links_.empty()) {
    return;
  }
  if (auto line = shim_signal_line(signo)) {
    links_[rank_link_[index]]->send(rank, std::move(*line));
  }
}

bool SshBackend::dump_stacks(int rank, DumpTool tool, Millis timeout) {
  auto index = static_cast<std::size_t>(rank);
  if (index >= rank_link_.size() || links_.empty()) {
    return false;
  }
  links_[rank_link_[index]]->send(rank, stack_dump_line(tool, timeout));
  return true;
}

// A failed prepare() leaves its units' channels: freed before their
// sessions (a session frees its channels; `pending_ = {}` alone would free
// the sessions first, then the channels again).
void SshBackend::drop_pending() {
  pending_.ready.clear();
  pending_.relays.clear();
  pending_ = {};
}

// The connections of the ranks' hosts are kept (without shims, with ddl's
// relay where one runs) for the next launch on them: a restart, a re-plan
// or the job after the preflight's check reconnects only the hosts whose
// connection was lost, and where the relay lives starts no login shell.
void SshBackend::shutdown() {
  for (std::size_t rank = 0; rank < rank_link_.size(); ++rank) {
    detach_stdin(static_cast<int>(rank));  // its sink writes to links_
  }
  drop_pending();
  for (auto& [name, connection] : kept_) {
    connection.shim.reset();
  }
  for (auto& link : links_) {
    if (HostLink::Kept kept = link->release(); kept.session && !kept_.contains(link->host_name())) {
      SshConnection& connection = kept_[link->host_name()];
      connection.session = std::move(kept.session);
      connection.relay = std::move(kept.relay);
    }
  }
  links_.clear();
}

} // namespace ddl
