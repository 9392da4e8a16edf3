// SPDX-License-Identifier: MIT
#include "src/launch/restart_policy.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace ddl {

namespace {

constexpr Millis k_max_backoff{60'000};

bool contains(const std::vector<int>& codes, int code) { return std::ranges::find(codes, code) != codes.end(); }

} // namespace

RestartRules restart_rules(const JobSpec& job, int max_restarts) {
  RestartRules rules;
  rules.max_restarts = max_restarts;
  rules.min_np = job.launch.np.min;
  rules.max_host_losses = job.launch.max_host_losses;
  rules.host_failures = job.launch.host_failures;
  rules.restart_on = job.launch.restart_on;
  rules.fail_on = job.launch.fail_on;
  rules.backoff = job.launch.backoff;
  return rules;
}

bool is_host_loss(const RankExit& how) { return !how.launch_error.empty(); }

bool RestartPolicy::is_excluded(const std::string& host) const {
  return std::ranges::any_of(excluded_, [&](const LeftOutHost& left) { return left.name == host; });
}

bool RestartPolicy::exclude(const std::string& host, const std::string& why) {
  if (!is_excluded(host)) {
    excluded_.push_back({host, why});
  }
  return !rules_.max_host_losses || host_losses() <= *rules_.max_host_losses;
}

std::optional<std::string> RestartPolicy::exclude_lost(const std::vector<LeftOutHost>& lost) {
  bool within_limit = true;
  for (const LeftOutHost& host : lost) {
    within_limit = exclude(host.name, host.why) && within_limit;
  }
  return within_limit ? std::nullopt : std::optional<std::string>(too_many_losses());
}

std::string RestartPolicy::too_many_losses() const {
  const int lost = host_losses();
  return fmt::format("{} host{} lost, more than launch.max_host_losses {}", lost, lost == 1 ? "" : "s",
                     rules_.max_host_losses.value_or(0));
}

// Hosts whose connection was lost, then the first failure's host when it
// failed first host_failures times.
std::vector<LeftOutHost> RestartPolicy::lost_hosts(const std::vector<RankFailure>& failures) {
  std::vector<LeftOutHost> lost;
  auto add = [&](const std::string& host, const std::string& why) {
    if (!is_excluded(host) &&
        std::ranges::none_of(lost, [&](const LeftOutHost& known) { return known.name == host; })) {
      lost.push_back({host, why});
    }
  };
  for (const auto& failure : failures) {
    if (is_host_loss(failure.how)) {
      add(failure.host, failure.how.launch_error);
    }
  }
  if (rules_.host_failures > 0 && !failures.empty()) {
    const std::string& host = failures.front().host;
    auto found = std::ranges::find_if(first_failures_, [&](const auto& entry) { return entry.first == host; });
    if (found == first_failures_.end()) {
      first_failures_.emplace_back(host, 0);
      found = first_failures_.end() - 1;
    }
    if (++found->second >= rules_.host_failures) {
      add(host, fmt::format("its ranks failed first {} time{}", found->second, found->second == 1 ? "" : "s"));
    }
  }
  return lost;
}

std::optional<std::string> RestartPolicy::code_rule_stops(int code) const {
  if (contains(rules_.fail_on, code)) {
    return fmt::format("exit code {} is in launch.fail_on", code);
  }
  if (!rules_.restart_on.empty() && !contains(rules_.restart_on, code)) {
    return fmt::format("exit code {} is not in launch.restart_on", code);
  }
  return std::nullopt;
}

Millis RestartPolicy::next_wait() const {
  if (rules_.backoff.count() == 0) {
    return Millis{0};
  }
  Millis wait = rules_.backoff;
  for (int i = 1; i < restarts_ && wait < k_max_backoff; ++i) {
    wait *= 2;
  }
  return std::min(wait, k_max_backoff);
}

RestartDecision RestartPolicy::after_failure(const std::vector<RankFailure>& failures) {
  RestartDecision decision;
  if (failures.empty()) {
    return decision;
  }
  if (elastic()) {
    decision.lost = lost_hosts(failures);
  }
  if (!decision.lost.empty()) {
    for (const auto& host : decision.lost) {
      excluded_.push_back(host);
    }
    if (rules_.max_host_losses && host_losses() > *rules_.max_host_losses) {
      decision.why = too_many_losses();
      return decision;
    }
    ++restarts_;
    decision.verdict = Verdict::replan;
    decision.wait = next_wait();
    return decision;
  }
  if (auto stops = code_rule_stops(failures.front().how.code)) {
    decision.why = *stops;
    return decision;
  }
  if (program_restarts_ >= rules_.max_restarts) {
    return decision;
  }
  ++program_restarts_;
  ++restarts_;
  // Elastic: every restart re-runs the host source and the preflight, so a
  // host that went quiet (no lost connection) is found and left out too.
  decision.verdict = elastic() ? Verdict::replan : Verdict::restart;
  decision.wait = next_wait();
  return decision;
}

} // namespace ddl
