// SPDX-License-Identifier: MIT
// --include / --exclude applied to the hosts: DeepSpeed's launcher's rules.
#include <algorithm>

#include <fmt/core.h>

#include "src/inventory/inventory.hpp"
#include "src/job/job_host_filter.hpp"

namespace ddl {

namespace {

// A host's slot ids: its GPUs when known, else 0..slots-1 (one GPU per slot,
// as the plan assumes).
std::vector<int> slot_ids(const Host& host) {
  if (!host.gpus.empty()) {
    return host.gpus;
  }
  std::vector<int> ids;
  for (int i = 0; i < host.slots; ++i) {
    ids.push_back(i);
  }
  return ids;
}

std::string id_list(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) {
    out += (out.empty() ? "" : ",") + std::to_string(id);
  }
  return out;
}

// Each named host and slot exists; returns the host's index per filter entry.
Result<std::vector<std::size_t>> locate(const Inventory& hosts, const std::vector<HostSlots>& filter,
                                        std::string_view flag) {
  std::vector<std::size_t> found;
  for (const HostSlots& entry : filter) {
    auto host = std::ranges::find(hosts, entry.host, &Host::name);
    if (host == hosts.end()) {
      return fail(ExitCode::usage, fmt::format("{}: host '{}' is not among the job's hosts", flag, entry.host));
    }
    const std::vector<int> ids = slot_ids(*host);
    for (int slot : entry.slots) {
      if (std::ranges::find(ids, slot) == ids.end()) {
        return fail(ExitCode::usage,
                    fmt::format("{}: host '{}' has no slot {} (its slots: {})", flag, entry.host, slot, id_list(ids)));
      }
    }
    found.push_back(static_cast<std::size_t>(host - hosts.begin()));
  }
  return found;
}

// `host` keeping only `keep` of its slot ids (in its own order).
Host with_slots(Host host, const std::vector<int>& keep) {
  std::vector<int> ids;
  for (int id : slot_ids(host)) {
    if (std::ranges::find(keep, id) != keep.end()) {
      ids.push_back(id);
    }
  }
  host.slots = static_cast<int>(ids.size());
  host.gpus = std::move(ids);
  return host;
}

std::vector<int> without(const std::vector<int>& ids, const std::vector<int>& drop) {
  std::vector<int> out;
  std::ranges::copy_if(ids, std::back_inserter(out), [&](int id) { return std::ranges::find(drop, id) == drop.end(); });
  return out;
}

Result<Inventory> apply(const Inventory& hosts, std::string_view text, std::string_view flag, bool include) {
  auto filter = parse_host_filter(text);
  if (!filter) {
    return fail(ExitCode::usage, fmt::format("{}: {}", flag, filter.error().message));
  }
  auto located = locate(hosts, *filter, flag);
  if (!located) {
    return fail(located.error());
  }
  Inventory out;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    bool named = false;
    std::vector<int> slots;  // the named slots; all of them when an entry names none
    bool whole = false;
    for (std::size_t i = 0; i < filter->size(); ++i) {
      if ((*located)[i] == h) {
        named = true;
        whole = whole || (*filter)[i].slots.empty();
        slots.insert(slots.end(), (*filter)[i].slots.begin(), (*filter)[i].slots.end());
      }
    }
    std::vector<int> keep = slot_ids(hosts[h]);
    if (named && whole) {
      keep = include ? keep : std::vector<int>{};
    } else if (named) {
      keep = include ? slots : without(keep, slots);
    } else if (include) {
      keep.clear();
    }
    if (!keep.empty()) {
      out.push_back(keep.size() == slot_ids(hosts[h]).size() ? hosts[h] : with_slots(hosts[h], keep));
    }
  }
  if (out.empty()) {
    return fail(ExitCode::usage, fmt::format("{} {}: no host is left", flag, text));
  }
  return out;
}

// The personalities' counts: the first max_hosts hosts, each with
// slots_each slots (and at most that many of its known GPUs).
Inventory apply_counts(Inventory hosts, const HostsSection& section) {
  if (section.max_hosts && hosts.size() > static_cast<std::size_t>(*section.max_hosts)) {
    hosts.resize(static_cast<std::size_t>(*section.max_hosts));
  }
  if (section.slots_each) {
    for (Host& host : hosts) {
      host.slots = *section.slots_each;
      if (host.gpus.size() > static_cast<std::size_t>(host.slots)) {
        host.gpus.resize(static_cast<std::size_t>(host.slots));
      }
    }
  }
  return hosts;
}

} // namespace

Result<Inventory> filter_hosts(Inventory hosts, const HostsSection& section) {
  Result<Inventory> kept = std::move(hosts);
  if (!section.include.empty()) {
    kept = apply(*kept, section.include, "--include", true);
  } else if (!section.exclude.empty()) {
    kept = apply(*kept, section.exclude, "--exclude", false);
  }
  if (!kept) {
    return kept;
  }
  return apply_counts(std::move(*kept), section);
}

} // namespace ddl
