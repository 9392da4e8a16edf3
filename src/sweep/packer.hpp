// SPDX-License-Identifier: MIT
// Which free slots a trial takes: best fit over the sweep's hosts.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "src/inventory/inventory.hpp"

namespace ddl::sweep {

// The part of one host a trial holds.
struct HostShare {
  std::size_t host = 0;    // index into the pool's hosts
  int ranks = 0;           // how many of the trial's ranks run there
  std::vector<int> slots;  // the slot indices it holds (a multi-host trial holds whole hosts)
};
using Placement = std::vector<HostShare>;

// Per host and slot, the GPU ids of a trial rank holding that slot (the
// ones `ddl run` binds to that slot's rank); empty when the job binds none.
using SlotGpus = std::vector<std::vector<std::vector<int>>>;

// The slots of every host, which are busy, and which hosts are excluded.
class SlotPool {
public:
  explicit SlotPool(const Inventory& hosts, SlotGpus slot_gpus = {});

  // A place for `np` ranks, or nullopt when none is free now. Best fit: on
  // one host when one has room, the fullest such host; else on as few whole
  // free hosts as hold them (largest first). Hosts in `avoid` (where the
  // trial failed) are used only when the other hosts could never hold it.
  std::optional<Placement> take(int np, const std::set<std::size_t>& avoid = {});
  void release(const Placement& placement);

  void exclude(std::size_t host) { hosts_.at(host).excluded = true; }
  bool excluded(std::size_t host) const { return hosts_.at(host).excluded; }
  // Slots on hosts not excluded: what `np` is checked against.
  int usable_slots(const std::set<std::size_t>& without = {}) const;
  int total_slots() const;
  std::size_t size() const { return hosts_.size(); }
  const Host& host(std::size_t index) const { return hosts_.at(index).host; }
  // The GPU ids of the slots `share` holds (SlotGpus), in slot order.
  std::vector<int> gpus_of(const HostShare& share) const;
  // The placement's hosts as typed specs: each host's name, login and
  // labels, its ranks as slots, and where the host's GPUs are known (probed,
  // or this machine's) those of the slots it holds.
  std::vector<HostSpec> specs(const Placement& placement) const;

private:
  struct PoolHost {
    Host host;
    std::vector<bool> busy;
    bool excluded = false;
    int free() const;
  };
  std::optional<Placement> take_from(int np, const std::set<std::size_t>& avoid);
  std::optional<Placement> one_host(int np, const std::set<std::size_t>& avoid);
  std::optional<Placement> whole_hosts(int np, const std::set<std::size_t>& avoid);
  HostShare hold(std::size_t host, int ranks, int slots);

  std::vector<PoolHost> hosts_;
  SlotGpus slot_gpus_;
};

// "ml@h1:2222:2" or "h1:4,h2:4": host specs as -H takes them.
std::string hosts_text(const std::vector<HostSpec>& specs);
// "h1" or "h1,h2": the hosts a trial runs on.
std::string host_names(const SlotPool& pool, const Placement& placement);

} // namespace ddl::sweep
