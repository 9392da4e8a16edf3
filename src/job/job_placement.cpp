// SPDX-License-Identifier: MIT
// [placement] and the elastic keys of [launch]: min_np, max_host_losses,
// host_failures, restart_on, fail_on, backoff; --np MIN:MAX.
#include <algorithm>
#include <climits>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/text.hpp"

namespace ddl {

LabelNeed label_need(const JobSpec& job) {
  const bool env_by_label = std::ranges::any_of(job.host_env, [](const HostEnv& table) {
    return table.pattern.find('=') != std::string::npos;
  });
  if (!job.placement.constraints.empty() || !job.placement.order.empty() || env_by_label) {
    return LabelNeed::required;
  }
  return job.hosts.show_labels ? LabelNeed::shown : LabelNeed::none;
}

} // namespace ddl

namespace ddl::job_detail {

namespace {

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"pack", "spread"};
  return names;
}

// An array of exit codes (0..255).
void read_codes(const Section& s, std::string_view key, std::vector<int>& out) {
  const toml::array* items = s.read_array(key, "an array of exit codes");
  if (items == nullptr) {
    return;
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    const toml::node& item = *items->get(i);
    const auto code = item.value<long long>();
    if (!item.is_integer() || !code || *code < 0 || *code > 255) {
      s.diag().at(item, fmt::format("{}[{}]: expected an exit code from 0 to 255", s.label(key), i));
      continue;
    }
    out.push_back(static_cast<int>(*code));
  }
}

void read_constraints(const Section& s, JobSpec& job) {
  const toml::node* value = s.node("constraints");
  if (value == nullptr) {
    return;
  }
  const auto* table = value->as_table();
  if (table == nullptr) {
    s.wrong_type("constraints", *value, "a table of label = \"value\"");
    return;
  }
  for (auto&& [key, item] : *table) {
    const auto* text = item.as_string();
    if (text == nullptr) {
      s.diag().at(item, fmt::format("placement.constraints.{}: expected a string, got {}", key.str(),
                                    type_phrase(item.type())));
      continue;
    }
    if (auto why = add_label(fmt::format("{}={}", key.str(), text->get()), job.placement.constraints)) {
      s.diag().at(item, "placement.constraints: " + *why);
    }
  }
}

} // namespace

void read_placement(const SectionInput& in) {
  const Section s = in.keys();
  JobSpec& job = in.job;
  std::string strategy;
  if (s.read_string("strategy", strategy)) {
    const auto& names = strategy_names();
    auto found = std::ranges::find(names, strategy);
    if (found == names.end()) {
      s.diag().at(*s.node("strategy"), "placement.strategy: " + choice_problem(strategy, names));
    } else {
      job.placement.strategy = found == names.begin() ? PlacementStrategy::pack : PlacementStrategy::spread;
    }
  }
  read_constraints(s, job);
  s.read_string("order", job.placement.order);
}

void read_elastic(const Section& s, JobSpec& job) {
  int value = 0;
  if (s.read_int("min_np", value, 1, k_max_world_size)) {
    job.launch.np.min = value;
  }
  if (s.read_int("max_host_losses", value, 0, INT_MAX)) {
    job.launch.max_host_losses = value;
  }
  s.read_int("host_failures", job.launch.host_failures, 0, INT_MAX);
  read_codes(s, "restart_on", job.launch.restart_on);
  read_codes(s, "fail_on", job.launch.fail_on);
  s.read_duration("backoff", job.launch.backoff, true);
  if (job.launch.np.min && job.launch.np.max && *job.launch.np.min > *job.launch.np.max) {
    s.diag().at(*s.node("min_np"),
                fmt::format("launch.min_np: {} is more than launch.np {}", *job.launch.np.min, *job.launch.np.max));
  }
}

void apply_np_range(const std::string& text, JobSpec& job, Diagnostics& diag) {
  const std::size_t colon = text.find(':');
  auto low = parse_int(text.substr(0, colon));
  auto high = colon == std::string::npos ? low : parse_int(text.substr(colon + 1));
  if (!low || !high) {
    diag.option(fmt::format("--np: {} is not N or MIN:MAX", quote_input(text)));
  } else if (*low < 1 || *high < 1) {
    diag.option("--np: must be at least 1");
  } else if (*high > k_max_world_size) {
    diag.option(fmt::format("--np: {} is above ddl's limit of {} ranks", *high, k_max_world_size));
  } else if (*low > *high) {
    diag.option(fmt::format("--np: the least ({}) is more than the most ({})", *low, *high));
  } else {
    job.launch.np.max = static_cast<int>(*high);
    if (colon != std::string::npos) {
      job.launch.np.min = static_cast<int>(*low);
    } else if (job.launch.np.min && *job.launch.np.min > *high) {
      diag.option(fmt::format("--np: {} is less than launch.min_np {}", *high, *job.launch.np.min));
    }
  }
}

} // namespace ddl::job_detail
