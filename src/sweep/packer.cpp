// SPDX-License-Identifier: MIT
#include "src/sweep/packer.hpp"

#include <algorithm>
#include <numeric>

namespace ddl::sweep {

int SlotPool::PoolHost::free() const {
  return excluded ? 0 : static_cast<int>(std::ranges::count(busy, false));
}

SlotPool::SlotPool(const Inventory& hosts, SlotGpus slot_gpus) : slot_gpus_(std::move(slot_gpus)) {
  for (const Host& host : hosts) {
    hosts_.push_back(PoolHost{host, std::vector<bool>(static_cast<std::size_t>(std::max(host.slots, 0)), false),
                              false});
  }
}

int SlotPool::usable_slots(const std::set<std::size_t>& without) const {
  int sum = 0;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    sum += hosts_[h].excluded || without.contains(h) ? 0 : hosts_[h].host.slots;
  }
  return sum;
}

int SlotPool::total_slots() const {
  return std::accumulate(hosts_.begin(), hosts_.end(), 0, [](int sum, const PoolHost& h) { return sum + h.host.slots; });
}

std::optional<Placement> SlotPool::take(int np, const std::set<std::size_t>& avoid) {
  if (avoid.empty() || usable_slots(avoid) < np) {
    return take_from(np, {});
  }
  return take_from(np, avoid);
}

std::optional<Placement> SlotPool::take_from(int np, const std::set<std::size_t>& avoid) {
  if (auto placed = one_host(np, avoid)) {
    return placed;
  }
  return whole_hosts(np, avoid);
}

std::optional<Placement> SlotPool::one_host(int np, const std::set<std::size_t>& avoid) {
  std::optional<std::size_t> best;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    const int free = hosts_[h].free();
    if (free >= np && !avoid.contains(h) && (!best || free < hosts_[*best].free())) {
      best = h;
    }
  }
  if (!best) {
    return std::nullopt;
  }
  return Placement{hold(*best, np, np)};
}

// A trial over several hosts holds each of them whole: its ranks' GPUs are
// then the ones `ddl run` binds (local rank i: GPU i) without any overlap.
std::optional<Placement> SlotPool::whole_hosts(int np, const std::set<std::size_t>& avoid) {
  std::vector<std::size_t> idle;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (!avoid.contains(h) && hosts_[h].free() == hosts_[h].host.slots && hosts_[h].host.slots > 0) {
      idle.push_back(h);
    }
  }
  std::ranges::stable_sort(idle, [&](std::size_t a, std::size_t b) { return hosts_[a].host.slots > hosts_[b].host.slots; });
  int sum = 0;
  std::size_t used = 0;
  while (used < idle.size() && sum < np) {
    sum += hosts_[idle[used++]].host.slots;
  }
  if (sum < np) {
    return std::nullopt;
  }
  idle.resize(used);
  std::ranges::sort(idle);  // ranks fill hosts in host order
  Placement placement;
  int left = np;
  for (std::size_t h : idle) {
    const int ranks = std::min(left, hosts_[h].host.slots);
    placement.push_back(hold(h, ranks, hosts_[h].host.slots));
    left -= ranks;
  }
  return placement;
}

HostShare SlotPool::hold(std::size_t host, int ranks, int slots) {
  HostShare share{host, ranks, {}};
  auto& busy = hosts_[host].busy;
  for (std::size_t s = 0; s < busy.size() && static_cast<int>(share.slots.size()) < slots; ++s) {
    if (!busy[s]) {
      busy[s] = true;
      share.slots.push_back(static_cast<int>(s));
    }
  }
  return share;
}

void SlotPool::release(const Placement& placement) {
  for (const HostShare& share : placement) {
    for (int s : share.slots) {
      hosts_.at(share.host).busy.at(static_cast<std::size_t>(s)) = false;
    }
  }
}

std::vector<int> SlotPool::gpus_of(const HostShare& share) const {
  std::vector<int> gpus;
  if (share.host >= slot_gpus_.size()) {
    return gpus;
  }
  for (int slot : share.slots) {
    const auto& ids = slot_gpus_[share.host].at(static_cast<std::size_t>(slot));
    gpus.insert(gpus.end(), ids.begin(), ids.end());
  }
  return gpus;
}

std::vector<HostSpec> SlotPool::specs(const Placement& placement) const {
  std::vector<HostSpec> specs;
  for (const HostShare& share : placement) {
    HostSpec spec = host_spec_of(host(share.host));
    spec.slots = share.ranks;
    spec.gpus = spec.gpus.empty() ? std::vector<int>{} : gpus_of(share);
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string hosts_text(const std::vector<HostSpec>& specs) {
  std::string text;
  for (const HostSpec& spec : specs) {
    text += (text.empty() ? "" : ",") + format_host_spec(spec);
  }
  return text;
}

std::string host_names(const SlotPool& pool, const Placement& placement) {
  std::string names;
  for (const HostShare& share : placement) {
    names += (names.empty() ? "" : ",") + pool.host(share.host).name;
  }
  return names;
}

} // namespace ddl::sweep
