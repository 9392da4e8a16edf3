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

} // namespace

void read_preflight(const SectionInput& in) {
  const Section s = in.keys();
  PreflightSection& preflight = in.job.preflight;
  preflight.in_file = in.table() != nullptr;
  preflight.enabled_said = s.read_bool("enabled", preflight.enabled);
  s.read_bool("network", preflight.network);
  read_fraction(s, "min_fraction", 1.0, preflight.min_fraction);
  if (double factor = 0; read_fraction(s, "max_latency_factor", 1000.0, factor)) {
    if (factor < 1.0) {
      s.diag().at(*s.node("max_latency_factor"), "preflight.max_latency_factor: must be at least 1");
    } else {
      preflight.max_latency_factor = factor;
    }
  }
  if (s.read_duration("budget", preflight.budget, false) && preflight.budget < Millis{1'000}) {
    // Less cannot hold a launch and a measurement: every host would be named.
    s.diag().at(*s.node("budget"), "preflight.budget: must be at least 1s (the check launches on every host)");
  }
  if (PreflightOnFail on_fail{}; read_choice(s, "on_fail", {"exclude", "stop", "warn"}, on_fail)) {
    preflight.on_fail = on_fail;
  }
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
