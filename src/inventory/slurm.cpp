// SPDX-License-Identifier: MIT
// The Slurm allocation as an inventory: SLURM_JOB_NODELIST and its task counts.
#include <fmt/core.h>

#include "src/inventory/inventory.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr long long k_max_count = k_max_world_size;

Unexpected bad_tasks(std::string_view text, std::string_view why) {
  return fail(ExitCode::usage,
              fmt::format("SLURM_TASKS_PER_NODE '{}': {} (expected a form like '2(x3),1')", text, why));
}

std::optional<int> positive(std::string_view text) {
  auto value = parse_int(text);
  if (!value || *value < 1 || *value > k_max_count) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::string env_value(const std::function<const char*(const char*)>& getenv_fn, const char* name) {
  const char* value = getenv_fn(name);
  return value == nullptr ? std::string() : std::string(trim(value));
}

} // namespace

Result<std::vector<int>> parse_slurm_tasks_per_node(std::string_view text) {
  std::vector<int> counts;
  if (trim(text).empty()) {
    return bad_tasks(text, "empty");
  }
  for (const auto& item : split(trim(text), ',')) {
    std::string_view part = item;
    int repeat = 1;
    if (auto open = part.find('('); open != std::string_view::npos) {
      if (!part.ends_with(')') || part.substr(open + 1, 1) != "x") {
        return bad_tasks(text, fmt::format("bad repeat in '{}'", part));
      }
      auto times = positive(part.substr(open + 2, part.size() - open - 3));
      if (!times) {
        return bad_tasks(text, fmt::format("bad repeat count in '{}'", part));
      }
      repeat = *times;
      part = part.substr(0, open);
    }
    auto count = positive(part);
    if (!count) {
      return bad_tasks(text, fmt::format("bad task count '{}'", part));
    }
    if (counts.size() + static_cast<std::size_t>(repeat) > static_cast<std::size_t>(k_max_count)) {
      return bad_tasks(text, "too many nodes");
    }
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), *count);
  }
  return counts;
}

Result<Inventory> slurm_inventory(const std::function<const char*(const char*)>& getenv_fn) {
  std::string nodelist = env_value(getenv_fn, "SLURM_JOB_NODELIST");
  if (nodelist.empty()) {
    nodelist = env_value(getenv_fn, "SLURM_NODELIST");
  }
  if (nodelist.empty()) {
    return fail(ExitCode::usage,
                "hosts.slurm: SLURM_JOB_NODELIST is not set; run ddl inside a Slurm allocation "
                "(salloc, sbatch) or choose another host source");
  }
  auto specs = expand_hostlist(nodelist);
  if (!specs) {
    return fail(ExitCode::usage, "SLURM_JOB_NODELIST: " + specs.error().message);
  }
  const std::string tasks = env_value(getenv_fn, "SLURM_TASKS_PER_NODE");
  const std::string gpus_text = env_value(getenv_fn, "SLURM_GPUS_ON_NODE");
  std::optional<int> gpus_on_node;
  if (!gpus_text.empty()) {
    gpus_on_node = positive(gpus_text);
    if (!gpus_on_node) {
      return fail(ExitCode::usage, fmt::format("SLURM_GPUS_ON_NODE '{}' is not a GPU count", gpus_text));
    }
  }
  std::vector<int> slots;
  if (!tasks.empty()) {
    auto counts = parse_slurm_tasks_per_node(tasks);
    if (!counts) {
      return fail(counts.error());
    }
    slots = *counts;
    if (slots.size() != specs->size()) {
      return fail(ExitCode::usage,
                  fmt::format("SLURM_TASKS_PER_NODE '{}' gives {} task counts for the {} nodes of "
                              "SLURM_JOB_NODELIST '{}'",
                              tasks, slots.size(), specs->size(), nodelist));
    }
  } else if (gpus_on_node) {
    slots.assign(specs->size(), *gpus_on_node);
  } else {
    return fail(ExitCode::usage,
                "hosts.slurm: neither SLURM_TASKS_PER_NODE nor SLURM_GPUS_ON_NODE is set, so the "
                "slots per node are unknown");
  }
  Inventory inventory;
  for (std::size_t i = 0; i < specs->size(); ++i) {
    const auto& spec = (*specs)[i];
    if (auto why = host_name_problem(spec.name)) {
      return fail(ExitCode::usage, fmt::format("SLURM_JOB_NODELIST: bad host name {}: {}", quote_input(spec.name), *why));
    }
    Host host;
    host.name = spec.name;
    host.address = spec.name;
    host.slots = slots[i];
    // Slurm renumbers the step's GPUs from 0 on each node (cgroup-relative).
    for (int g = 0; g < gpus_on_node.value_or(0); ++g) {
      host.gpus.push_back(g);
    }
    host.source = "slurm";
    inventory.push_back(std::move(host));
  }
  return inventory;
}

} // namespace ddl
