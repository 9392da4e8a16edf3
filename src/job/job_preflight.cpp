// SPDX-License-Identifier: MIT
// Reads [preflight] (issue 43): the network check before the ranks start.
#include <fmt/core.h>

#include "src/job/job_reader.hpp"

namespace ddl::job_detail {

namespace {

// A positive number (integer or float) at `key` within (0, max]; false when
// absent or wrong (reported).
bool read_fraction(const Section& s, std::string_view key, double max, double& out) {
  const toml::node* node = s.node(key);
  if (node == nullptr) {
    return false;
  }
  std::optional<double> value = node->value<double>();
  if (!value || node->is_boolean() || node->is_string()) {
    s.wrong_type(key, *node, "a number");
    return false;
  }
  if (!(*value > 0.0) || *value > max) {
    s.diag().at(*node, fmt::format("{}: must be above 0 and at most {}", s.label(key), max));
    return false;
  }
  out = *value;
  return true;
}

void read_on_fail(const Section& s, PreflightSection& preflight) {
  std::string text;
  if (!s.read_string("on_fail", text)) {
    return;
  }
  static const std::vector<std::string> names = {"exclude", "stop", "warn"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (text == names[i]) {
      preflight.on_fail = static_cast<PreflightOnFail>(i);
      return;
    }
  }
  s.diag().at(*s.node("on_fail"), s.label("on_fail") + ": " + choice_problem(text, names));
}

} // namespace

void read_preflight(const SectionInput& in) {
  const Section s = in.keys();
  PreflightSection& preflight = in.job.preflight;
  preflight.enabled = in.table() != nullptr;
  read_fraction(s, "min_fraction", 1.0, preflight.min_fraction);
  if (double factor = 0; read_fraction(s, "max_latency_factor", 1000.0, factor)) {
    if (factor < 1.0) {
      s.diag().at(*s.node("max_latency_factor"), "preflight.max_latency_factor: must be at least 1");
    } else {
      preflight.max_latency_factor = factor;
    }
  }
  s.read_duration("budget", preflight.budget, false);
  read_on_fail(s, preflight);
}

} // namespace ddl::job_detail

namespace ddl {

PreflightOnFail preflight_on_fail(const PreflightSection& preflight, bool elastic_np) {
  if (preflight.on_fail) {
    return *preflight.on_fail;
  }
  return elastic_np ? PreflightOnFail::exclude : PreflightOnFail::stop;
}

} // namespace ddl
