// SPDX-License-Identifier: MIT
#pragma once

// What happens after an attempt fails: restart the same gang, restart on the
// hosts left after excluding lost ones (elastic, [launch] min_np), or stop.
// Host losses and program failures are counted apart (max_host_losses,
// max_restarts); restart_on / fail_on filter exit codes; backoff delays.

#include <optional>
#include <string>
#include <vector>

#include "src/job/job.hpp"
#include "src/launch/backend.hpp"
#include "src/plan/placement.hpp"
#include "src/util/duration.hpp"

namespace ddl {

struct RestartRules {
  int max_restarts = 0;
  std::optional<int> min_np{};           // set: elastic
  std::optional<int> max_host_losses{};  // nullopt: no limit but min_np
  int host_failures = 0;               // 0: a program failure never loses a host
  std::vector<int> restart_on{};
  std::vector<int> fail_on{};
  Millis backoff{0};
};

// The job's rules; `max_restarts` after --max-restarts.
RestartRules restart_rules(const JobSpec& job, int max_restarts);

// One rank that failed in an attempt.
struct RankFailure {
  int rank = 0;
  std::string host{};
  RankExit how{};
};

enum class Verdict { stop, restart, replan };

struct RestartDecision {
  Verdict verdict = Verdict::stop;
  std::vector<LeftOutHost> lost{};  // replan: hosts excluded now
  std::string why{};              // stop: why not restarted ("" when restarts ran out)
  Millis wait{0};                 // before the next attempt
};

// "lost the connection to h3: ..." and the like: a rank that ended without
// an exit status of its program (launch_error set), as opposed to a program
// failure.
bool is_host_loss(const RankExit& how);

class RestartPolicy {
public:
  explicit RestartPolicy(RestartRules rules) : rules_(std::move(rules)) {}

  // After a failed attempt; `failures` holds every failed rank, the first
  // failure first. Counts what it decides.
  RestartDecision after_failure(const std::vector<RankFailure>& failures);

  // Excludes `host` (a preflight failure, found when planning a round).
  // False when that passes max_host_losses.
  bool exclude(const std::string& host, const std::string& why);
  // Excludes every host of `lost` (unreached after its preflight); why the
  // job cannot go on when that passes max_host_losses.
  std::optional<std::string> exclude_lost(const std::vector<LeftOutHost>& lost);
  // "4 hosts lost, more than launch.max_host_losses 3".
  std::string too_many_losses() const;

  bool elastic() const { return rules_.min_np.has_value(); }
  bool is_excluded(const std::string& host) const;
  const std::vector<LeftOutHost>& excluded() const { return excluded_; }
  const RestartRules& rules() const { return rules_; }
  int restarts_used() const { return restarts_; }
  int program_restarts() const { return program_restarts_; }
  int host_losses() const { return static_cast<int>(excluded_.size()); }

private:
  std::vector<LeftOutHost> lost_hosts(const std::vector<RankFailure>& failures);
  std::optional<std::string> code_rule_stops(int code) const;
  Millis next_wait() const;

  RestartRules rules_;
  int restarts_ = 0;  // every restart, of either kind (for the backoff)
  int program_restarts_ = 0;
  std::vector<LeftOutHost> excluded_;
  std::vector<std::pair<std::string, int>> first_failures_;  // per host, for host_failures
};

} // namespace ddl
