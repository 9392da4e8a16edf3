// SPDX-License-Identifier: MIT
// Labels of the Slurm allocation's nodes: the partition, and each node's
// ActiveFeatures from one `scontrol -o show node NODELIST`, read only when
// the job uses labels (label_need).
#include <sys/wait.h>

#include <fmt/core.h>

#include "src/inventory/inventory.hpp"
#include "src/util/run_captured.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr Millis k_scontrol_timeout{30'000};

// The value of the first "KEY=..." word of a one-line record; nullopt when absent.
std::optional<std::string_view> field(std::string_view record, std::string_view key) {
  for (std::size_t at = 0; at < record.size();) {
    std::size_t end = record.find(' ', at);
    std::string_view word = record.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (word.size() > key.size() && word.starts_with(key) && word[key.size()] == '=') {
      return word.substr(key.size() + 1);
    }
    if (end == std::string_view::npos) {
      break;
    }
    at = end + 1;
  }
  return std::nullopt;
}

// The last line scontrol wrote on stderr, else how it ended.
std::string scontrol_failure(const Captured& run) {
  std::string last = last_lines(run.err, 1);
  if (run.timed_out) {
    return fmt::format("timed out after {}{}", format_duration(k_scontrol_timeout), last.empty() ? "" : " (" + last + ")");
  }
  return last.empty() ? exit_text(run.status) : last;
}

// Each host's feature.F=true labels; the error says why not.
Result<void> add_features(Inventory& hosts, const std::string& nodelist) {
  auto run = run_captured({"scontrol", "-o", "--", "show", "node", nodelist}, k_scontrol_timeout);
  if (!run) {
    return fail(run.error());
  }
  if (run->stopped) {
    return fail(stop::error("running scontrol show node"));
  }
  if (run->timed_out || !WIFEXITED(run->status) || WEXITSTATUS(run->status) != 0) {
    return fail(ExitCode::launch, "scontrol show node failed: " + scontrol_failure(*run));
  }
  auto features = parse_node_features(run->out);
  for (const Host& host : hosts) {
    if (!features.contains(host.name)) {
      return fail(ExitCode::launch, fmt::format("scontrol show node printed nothing for node {}", host.name));
    }
  }
  for (Host& host : hosts) {
    for (const std::string& feature : features.at(host.name)) {
      add_label(fmt::format("feature.{}=true", feature), host.labels);  // one a label cannot hold is left out
    }
  }
  return {};
}

} // namespace

std::map<std::string, std::vector<std::string>> parse_node_features(std::string_view scontrol_output) {
  std::map<std::string, std::vector<std::string>> nodes;
  for (const std::string& line : split(scontrol_output, '\n')) {
    auto name = field(line, "NodeName");
    if (!name || name->empty()) {
      continue;
    }
    std::vector<std::string>& features = nodes[std::string(*name)];
    auto active = field(line, "ActiveFeatures");
    if (!active || *active == "(null)") {
      continue;
    }
    for (const std::string& feature : split(*active, ',')) {
      if (!trim(feature).empty()) {
        features.emplace_back(trim(feature));
      }
    }
  }
  return nodes;
}

Result<void> add_slurm_labels(Inventory& hosts, const std::function<const char*(const char*)>& getenv_fn,
                              LabelNeed need) {
  if (need == LabelNeed::none) {
    return {};
  }
  const char* partition = getenv_fn("SLURM_JOB_PARTITION");
  if (partition != nullptr && *partition != '\0') {
    for (Host& host : hosts) {
      add_label(fmt::format("partition={}", trim(partition)), host.labels);
    }
  }
  const char* nodelist = getenv_fn("SLURM_JOB_NODELIST");
  if (nodelist == nullptr || *nodelist == '\0') {
    nodelist = getenv_fn("SLURM_NODELIST");
  }
  auto added = add_features(hosts, nodelist == nullptr ? "" : std::string(trim(nodelist)));
  if (added) {
    return {};
  }
  return labels_unread(hosts, need, added.error(), "Slurm nodes shown without their features",
                       "the features of the allocation's nodes",
                       "run ddl where scontrol works, or take the labels out of [placement]");
}

} // namespace ddl
