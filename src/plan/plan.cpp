// SPDX-License-Identifier: MIT
#include "src/plan/plan.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace ddl {

namespace {

long long total_slots(const Inventory& inventory) {
  long long sum = 0;
  for (const auto& host : inventory) {
    sum += host.slots;
  }
  return sum;
}

// The GPUs of one local rank. Known GPUs are shared out in contiguous blocks
// (8 GPUs, 4 ranks: 2 each); fewer GPUs than ranks are shared round-robin.
// Unknown GPUs: the slot index, i.e. GPU `local_rank`.
std::vector<int> gpus_for(const Host& host, int local_rank, int local_size) {
  if (!gpus_known(host)) {
    return {local_rank};
  }
  const auto count = static_cast<int>(host.gpus.size());
  if (count == 0) {
    return {};
  }
  if (count < local_size) {
    return {host.gpus[static_cast<std::size_t>(local_rank % count)]};
  }
  const int per_rank = count / local_size;
  std::vector<int> mine;
  for (int i = 0; i < per_rank; ++i) {
    mine.push_back(host.gpus[static_cast<std::size_t>(local_rank * per_rank + i)]);
  }
  return mine;
}

// Horovod's cross rank: the index among ranks with the same local rank.
void fill_cross(std::vector<RankSlot>& ranks) {
  std::vector<int> count;
  for (auto& slot : ranks) {
    const auto local = static_cast<std::size_t>(slot.local_rank);
    if (local >= count.size()) {
      count.resize(local + 1, 0);
    }
    slot.cross_rank = count[local]++;
  }
  for (auto& slot : ranks) {
    slot.cross_size = count[static_cast<std::size_t>(slot.local_rank)];
  }
}

Result<void> check_tf_counts(const TensorflowSection& tf, int world_size) {
  if (tf.chief < 0 || tf.chief > 1) {
    return fail(ExitCode::usage, fmt::format("tensorflow.chief must be 0 or 1, not {}", tf.chief));
  }
  if (tf.evaluator < 0 || tf.evaluator > 1) {
    return fail(ExitCode::usage,
                fmt::format("tensorflow.evaluator must be 0 or 1, not {}", tf.evaluator));
  }
  if (tf.ps < 0) {
    return fail(ExitCode::usage, fmt::format("tensorflow.ps must not be negative ({})", tf.ps));
  }
  const int fixed = tf.chief + tf.ps + tf.evaluator;
  if (fixed > world_size) {
    return fail(ExitCode::usage,
                fmt::format("tensorflow roles need {} ranks (chief {} + ps {} + evaluator {}) "
                            "but the job has only {}",
                            fixed, tf.chief, tf.ps, tf.evaluator, world_size));
  }
  if (tf.ps > 0 && fixed == world_size) {
    return fail(ExitCode::usage,
                fmt::format("tensorflow.ps = {} leaves no worker among {} ranks; parameter-server "
                            "training needs at least one",
                            tf.ps, world_size));
  }
  return {};
}

// Roles fill ranks in the order chief, worker, ps, evaluator.
Result<void> assign_tf_roles(const JobSpec& job, std::vector<RankSlot>& ranks) {
  const auto& tf = job.tensorflow;
  const auto world = static_cast<int>(ranks.size());
  if (auto ok = check_tf_counts(tf, world); !ok) {
    return ok;
  }
  const int workers = world - tf.chief - tf.ps - tf.evaluator;
  const std::pair<const char*, int> roles[] = {
      {"chief", tf.chief}, {"worker", workers}, {"ps", tf.ps}, {"evaluator", tf.evaluator}};
  std::size_t next = 0;
  for (const auto& [role, count] : roles) {
    for (int index = 0; index < count; ++index, ++next) {
      auto& slot = ranks[next];
      slot.tf_role = role;
      slot.tf_index = index;
      slot.tf_port = tf.port + slot.local_rank;
      if (slot.tf_port > 65535) {
        return fail(ExitCode::usage,
                    fmt::format("tensorflow.port {} + local rank {} is above 65535", tf.port,
                                slot.local_rank));
      }
    }
  }
  return {};
}

// --oversubscribe: `extra` ranks beyond the slots, one more per host in
// turn (as mpirun's byslot mapper shares out what the slots did not hold).
void oversubscribe(Placement& placed, long long extra) {
  for (long long i = 0; i < extra; ++i) {
    ++placed.ranks[static_cast<std::size_t>(i) % placed.ranks.size()];
  }
  placed.how += fmt::format(", oversubscribed by {}", extra);
}

// --map-by node: `np` ranks dealt one per host in turn over the hosts that
// `placed` fills (every eligible slot), a full host skipped; hosts left
// without a rank leave the placement.
void deal_over_hosts(Placement& placed, long long np) {
  std::vector<int> dealt(placed.ranks.size(), 0);
  for (long long given = 0; given < np;) {
    for (std::size_t h = 0; h < dealt.size() && given < np; ++h) {
      if (dealt[h] < placed.ranks[h]) {
        ++dealt[h];
        ++given;
      }
    }
  }
  Placement kept;
  for (std::size_t h = 0; h < dealt.size(); ++h) {
    if (dealt[h] > 0) {
      kept.hosts.push_back(placed.hosts[h]);
      kept.ranks.push_back(dealt[h]);
    } else {
      placed.left_out.push_back({placed.hosts[h].name, "not needed: --map-by node dealt every rank before it"});
    }
  }
  placed.hosts = std::move(kept.hosts);
  placed.ranks = std::move(kept.ranks);
  placed.how += ", ranks dealt over the hosts (--map-by node)";
}

// Each host's rank numbers: host by host (mpirun's --map-by slot), or dealt
// round-robin over the hosts, a full host skipped (--map-by node).
std::vector<std::vector<int>> rank_numbers(const std::vector<int>& counts, bool by_node) {
  std::vector<std::vector<int>> numbers(counts.size());
  int rank = 0;
  if (!by_node) {
    for (std::size_t h = 0; h < counts.size(); ++h) {
      for (int i = 0; i < counts[h]; ++i) {
        numbers[h].push_back(rank++);
      }
    }
    return numbers;
  }
  const int most = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  for (int round = 0; round < most; ++round) {
    for (std::size_t h = 0; h < counts.size(); ++h) {
      if (round < counts[h]) {
        numbers[h].push_back(rank++);
      }
    }
  }
  return numbers;
}

} // namespace

bool gpus_known(const Host& host) { return !host.gpus.empty() || host.source == "local" || host.gpus_probed; }

void mark_no_gpus(Plan& plan, std::size_t host_index) {
  plan.hosts.at(host_index).gpus_probed = true;
  plan.hosts.at(host_index).gpus.clear();
  for (RankSlot& slot : plan.ranks) {
    if (slot.host_index == host_index) {
      slot.gpus.clear();
    }
  }
}

Result<Plan> make_plan(const JobSpec& job, const Inventory& inventory) {
  if (inventory.empty()) {
    return fail(ExitCode::usage, "no hosts to run on");
  }
  std::vector<LeftOutHost> unused;
  const long long slots = total_slots(eligible_hosts(job.placement, inventory, unused));
  long long np = job.launch.np.max ? *job.launch.np.max : slots;
  if (job.launch.np.min && np > slots) {
    if (slots < *job.launch.np.min) {
      return fail(ExitCode::usage, fmt::format("{} slot{} left on {} eligible host{}, below min_np {}", slots,
                                               slots == 1 ? "" : "s", inventory.size() - unused.size(),
                                               inventory.size() - unused.size() == 1 ? "" : "s",
                                               *job.launch.np.min));
    }
    np = slots;  // elastic: as many ranks as the hosts left hold
  }
  if (np <= 0) {
    return fail(ExitCode::usage, fmt::format("np must be at least 1, not {}", np));
  }
  if (np > k_max_world_size) {
    return fail(ExitCode::usage, fmt::format("{} ranks is above ddl's limit of {}", np,
                                             k_max_world_size));
  }
  // --oversubscribe: every slot, then the rest shared out over those hosts.
  const long long fitted = job.placement.oversubscribe ? std::min(np, slots) : np;
  auto placed = place_ranks(job.placement, inventory, job.placement.by_node ? slots : fitted);
  if (!placed) {
    return fail(placed.error());
  }
  if (job.placement.by_node) {
    deal_over_hosts(*placed, fitted);
  }
  if (fitted < np) {
    oversubscribe(*placed, np - fitted);
  }
  Plan plan;
  plan.job = job.name;
  plan.world_size = static_cast<int>(np);
  plan.ranks.reserve(static_cast<std::size_t>(np));
  plan.placement = std::move(placed->how);
  plan.left_out = std::move(placed->left_out);
  plan.ranks.resize(static_cast<std::size_t>(np));
  const auto numbers = rank_numbers(placed->ranks, job.placement.by_node);
  for (std::size_t h = 0; h < placed->hosts.size(); ++h) {
    const Host& host = placed->hosts[h];
    const int local_size = placed->ranks[h];
    const int node_rank = static_cast<int>(plan.hosts.size());
    plan.hosts.push_back(host);
    for (int local = 0; local < local_size; ++local) {
      RankSlot slot;
      slot.rank = numbers[h][static_cast<std::size_t>(local)];
      slot.host_index = static_cast<std::size_t>(node_rank);
      slot.local_rank = local;
      slot.local_size = local_size;
      slot.node_rank = node_rank;
      if (job.launch.bind_gpus) {
        slot.gpus = gpus_for(host, local, local_size);
      }
      plan.ranks[static_cast<std::size_t>(slot.rank)] = std::move(slot);
    }
  }
  fill_cross(plan.ranks);
  // Roles are computed for every job (so `render --format tf-config` works),
  // but bad counts are an error only when the job uses tensorflow.
  if (auto ok = assign_tf_roles(job, plan.ranks); !ok) {
    if (uses_framework(job, Framework::tensorflow)) {
      return fail(ok.error());
    }
    for (auto& slot : plan.ranks) {
      slot.tf_role.clear();
      slot.tf_index = slot.tf_port = 0;
    }
  }
  return plan;
}

} // namespace ddl
