// SPDX-License-Identifier: MIT
#include "src/plan/placement.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/core.h>

namespace ddl {

namespace {

long long slots_of(const Inventory& hosts) {
  long long sum = 0;
  for (const auto& host : hosts) {
    sum += host.slots;
  }
  return sum;
}

// Hosts sharing `label`'s value adjacent; groups in order of first
// appearance; hosts without the label last, in their own order.
Inventory topology_order(Inventory hosts, const std::string& label) {
  if (label.empty()) {
    return hosts;
  }
  std::vector<std::string> groups;
  auto group_of = [&](const Host& host) -> std::size_t {
    auto found = host.labels.find(label);
    if (found == host.labels.end()) {
      return SIZE_MAX;
    }
    auto known = std::ranges::find(groups, found->second);
    if (known == groups.end()) {
      groups.push_back(found->second);
      return groups.size() - 1;
    }
    return static_cast<std::size_t>(known - groups.begin());
  };
  std::vector<std::pair<std::size_t, std::size_t>> keys;  // group, position
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    keys.emplace_back(group_of(hosts[i]), i);
  }
  std::ranges::sort(keys);
  Inventory ordered;
  ordered.reserve(hosts.size());
  for (const auto& [group, position] : keys) {
    ordered.push_back(std::move(hosts[position]));
  }
  return ordered;
}

std::vector<int> in_order_counts(const Inventory& hosts, long long np) {
  std::vector<int> counts(hosts.size(), 0);
  for (std::size_t i = 0; i < hosts.size() && np > 0; ++i) {
    counts[i] = static_cast<int>(std::min<long long>(hosts[i].slots, np));
    np -= counts[i];
  }
  return counts;
}

// Fewest hosts, fullest first: while no unused host can take the rest, the
// largest takes what it can; then the smallest that can takes the rest.
// Ties go to the host listed first.
std::vector<int> best_fit_counts(const Inventory& hosts, long long np) {
  std::vector<int> counts(hosts.size(), 0);
  while (np > 0) {
    std::optional<std::size_t> fits;
    std::optional<std::size_t> largest;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      if (counts[i] > 0) {
        continue;
      }
      if (hosts[i].slots >= np && (!fits || hosts[i].slots < hosts[*fits].slots)) {
        fits = i;
      }
      if (!largest || hosts[i].slots > hosts[*largest].slots) {
        largest = i;
      }
    }
    const std::size_t pick = fits ? *fits : *largest;
    counts[pick] = static_cast<int>(std::min<long long>(hosts[pick].slots, np));
    np -= counts[pick];
  }
  return counts;
}

// One rank at a time to each host with a free slot, in order, round after round.
std::vector<int> spread_counts(const Inventory& hosts, long long np) {
  std::vector<int> counts(hosts.size(), 0);
  while (np > 0) {
    for (std::size_t i = 0; i < hosts.size() && np > 0; ++i) {
      if (counts[i] < hosts[i].slots) {
        ++counts[i];
        --np;
      }
    }
  }
  return counts;
}

std::string strategy_text(PlacementStrategy strategy, bool all_slots) {
  switch (strategy) {
  case PlacementStrategy::in_order: return "hosts in order";
  case PlacementStrategy::pack: return all_slots ? "pack" : "pack: best fit, fewest hosts, fullest first";
  case PlacementStrategy::spread: return "spread: as many hosts as possible, ranks shared evenly";
  }
  return "";
}

std::string too_few_slots(long long np, const Inventory& eligible, const std::vector<LeftOutHost>& left_out) {
  const long long slots = slots_of(eligible);
  std::string out = fmt::format("np {} is more than the {} slots of {} host{}", np, slots, eligible.size(),
                                eligible.size() == 1 ? "" : "s");
  if (!left_out.empty()) {
    out += fmt::format(" ({} left out:", left_out.size());
    for (const auto& host : left_out) {
      out += fmt::format(" {} ({})", host.name, host.why);
    }
    out += ")";
  }
  return out;
}

} // namespace

std::optional<std::string> constraint_problem(const Labels& constraints, const Host& host) {
  for (const auto& [key, wanted] : constraints) {
    auto found = host.labels.find(key);
    if (found == host.labels.end()) {
      return fmt::format("constraint {}={}: no label {}", key, wanted, key);
    }
    if (found->second != wanted) {
      return fmt::format("constraint {}={}: has {}={}", key, wanted, key, found->second);
    }
  }
  return std::nullopt;
}

Inventory eligible_hosts(const PlacementSection& placement, const Inventory& inventory,
                         std::vector<LeftOutHost>& left_out) {
  Inventory eligible;
  for (const auto& host : inventory) {
    if (auto why = constraint_problem(placement.constraints, host)) {
      left_out.push_back({host.name, *why});
    } else {
      eligible.push_back(host);
    }
  }
  return topology_order(std::move(eligible), placement.order);
}

Result<Placement> place_ranks(const PlacementSection& placement, const Inventory& inventory, long long np) {
  Placement out;
  Inventory eligible = eligible_hosts(placement, inventory, out.left_out);
  if (eligible.empty() && !out.left_out.empty()) {
    return fail(ExitCode::usage, too_few_slots(np, eligible, out.left_out));
  }
  const long long slots = slots_of(eligible);
  if (np > slots) {
    return fail(ExitCode::usage, too_few_slots(np, eligible, out.left_out));
  }
  std::vector<int> counts;
  switch (placement.strategy) {
  case PlacementStrategy::in_order: counts = in_order_counts(eligible, np); break;
  case PlacementStrategy::pack: counts = best_fit_counts(eligible, np); break;
  case PlacementStrategy::spread: counts = spread_counts(eligible, np); break;
  }
  const std::string strategy = strategy_text(placement.strategy, np == slots);
  for (std::size_t i = 0; i < eligible.size(); ++i) {
    if (counts[i] > 0) {
      out.hosts.push_back(eligible[i]);
      out.ranks.push_back(counts[i]);
    } else {
      out.left_out.push_back({eligible[i].name, fmt::format("not needed ({})", strategy)});
    }
  }
  out.how = fmt::format("{}, {} of {} host{}", strategy, out.hosts.size(), inventory.size(),
                        inventory.size() == 1 ? "" : "s");
  if (!placement.constraints.empty()) {
    out.how += ", constraints " + format_labels(placement.constraints);
  }
  if (!placement.order.empty()) {
    out.how += ", order by " + placement.order;
  }
  return out;
}

} // namespace ddl
