// SPDX-License-Identifier: MIT
#include "backends/per_rank_backend.hpp"

#include <optional>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/util/host_progress.hpp"
#include "src/util/parallel.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

// Every host whose unit failed, each once with its first unit's problem:
// "cannot start on 2 of 5 hosts:\n  HOST: why\n  HOST: why".
std::string preflight_report(const std::vector<std::string>& host_problems, std::size_t hosts,
                             std::string_view preposition, std::string_view noun) {
  std::size_t failed = 0;
  std::string lines;
  for (const std::string& problem : host_problems) {
    if (!problem.empty()) {
      lines += problem;
      ++failed;
    }
  }
  return fmt::format("cannot start {} {} of {} {}{}:{}", preposition, failed, hosts, noun, hosts == 1 ? "" : "s",
                     lines);
}

} // namespace

Result<void> PerRankBackend::prepare(const Plan& plan, std::span<const RankLaunch> launches) {
  unreached_.clear();
  if (auto ready = prepare_gang(plan, launches); !ready) {
    return ready;
  }
  const std::vector<std::size_t> units = preflight_units(plan);
  if (units.empty()) {
    return {};
  }
  std::vector<std::optional<Error>> problems(units.size());
  std::vector<std::string> unit_hosts;
  for (std::size_t host : units) {
    unit_hosts.push_back(plan.hosts.at(host).name);
  }
  HostProgress progress("ready", std::move(unit_hosts));
  for_each_parallel(units.size(), preflight_fanout(), [&](std::size_t i) {
    progress.begin(i);
    if (stop::requested()) {
      problems[i] = stop::error("preparing the hosts");
    } else if (auto ready = preflight_unit(i, plan, launches); !ready) {
      problems[i] = ready.error();
    }
    progress.end(i, problems[i] ? std::string_view(problems[i]->message) : std::string_view());
  });
  std::vector<std::string> host_problems(plan.hosts.size());
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (problems[i] && stop::is_stop_error(*problems[i])) {
      return fail(*problems[i]);  // the phase it cut short
    }
    std::string& line = host_problems[units[i]];
    if (problems[i] && line.empty()) {
      line = fmt::format("\n  {}: {}", host_label(plan.hosts[units[i]]), problems[i]->message);
      if (unit_unreached(i)) {
        unreached_.push_back({plan.hosts[units[i]].name, problems[i]->message});
      }
    }
  }
  if (std::ranges::any_of(host_problems, [](const std::string& line) { return !line.empty(); })) {
    const PreflightWords words = preflight_words();
    return fail(ExitCode::launch, preflight_report(host_problems, plan.hosts.size(), words.preposition, words.noun));
  }
  if (std::string ready = preflight_passed(plan); !ready.empty()) {
    spdlog::info("{}", ready);
  }
  return {};
}

GangStart PerRankBackend::start(std::span<const RankLaunch> launches, RankEvents& events) {
  ends_.reset(launches.size(), events);
  for (std::size_t i = 0; i < launches.size(); ++i) {
    if (stop::requested()) {  // never a rank after a Ctrl-C or the deadline
      return {i, stop::error("starting the ranks")};
    }
    // Marked first: a rank may end before start_rank returns.
    ends_.mark(launches[i].rank, true);
    if (auto started = start_rank(launches[i], ends_); !started) {
      ends_.mark(launches[i].rank, false);
      return {i, started.error()};
    }
  }
  return {launches.size(), std::nullopt};
}

void PerRankBackend::signal_all(int signo) {
  for (int rank : ends_.running()) {
    signal_rank(rank, signo);
  }
}

std::vector<HostCheck> PerRankBackend::check(const Inventory& hosts) {
  auto checks = access_->check(hosts);
  return checks ? std::move(*checks) : Backend::check(hosts);
}

std::vector<HostTopology> PerRankBackend::read_topology(const Inventory& hosts) {
  auto topology = access_->read_topology(hosts);
  return topology ? std::move(*topology) : Backend::read_topology(hosts);
}

Result<void> PerRankBackend::prepare_gang(const Plan& /*plan*/, std::span<const RankLaunch> /*launches*/) {
  return {};
}

std::vector<std::size_t> PerRankBackend::preflight_units(const Plan& plan) {
  std::vector<std::size_t> units(plan.hosts.size());
  for (std::size_t h = 0; h < units.size(); ++h) {
    units[h] = h;
  }
  return units;
}

Result<void> PerRankBackend::preflight_unit(std::size_t /*unit*/, const Plan& /*plan*/,
                                            std::span<const RankLaunch> /*launches*/) {
  return {};
}

std::string PerRankBackend::preflight_passed(const Plan& /*plan*/) { return {}; }

void PerRankBackend::Ends::reset(std::size_t world, RankEvents& events) {
  std::lock_guard lock(mutex_);
  events_ = &events;
  running_.assign(world, 0);
}

void PerRankBackend::Ends::exited(int rank, const RankExit& how) {
  mark(rank, false);
  events_->exited(rank, how);
}

void PerRankBackend::Ends::mark(int rank, bool running) {
  std::lock_guard lock(mutex_);
  if (rank >= 0 && static_cast<std::size_t>(rank) < running_.size()) {
    running_[static_cast<std::size_t>(rank)] = running ? 1 : 0;
  }
}

std::vector<int> PerRankBackend::Ends::running() const {
  std::lock_guard lock(mutex_);
  std::vector<int> ranks;
  for (std::size_t rank = 0; rank < running_.size(); ++rank) {
    if (running_[rank] != 0) {
      ranks.push_back(static_cast<int>(rank));
    }
  }
  return ranks;
}

} // namespace ddl
