// SPDX-License-Identifier: MIT
#include "src/sweep/results.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "src/util/table.hpp"

namespace ddl::sweep {

std::vector<TrialOutcome> sorted_outcomes(const std::vector<TrialOutcome>& outcomes,
                                          const std::optional<SweepMetric>& metric) {
  std::vector<TrialOutcome> sorted = outcomes;
  const bool maximize = metric && metric->maximize;
  std::ranges::stable_sort(sorted, [maximize](const TrialOutcome& a, const TrialOutcome& b) {
    if (a.metric.has_value() != b.metric.has_value()) return a.metric.has_value();
    if (!a.metric || *a.metric == *b.metric) return a.trial < b.trial;
    return maximize ? *a.metric > *b.metric : *a.metric < *b.metric;
  });
  return sorted;
}

std::string results_table(const std::vector<Trial>& trials, const SweepOutcome& outcome,
                          const std::optional<SweepMetric>& metric) {
  std::vector<TableRow> rows(1);
  TableRow& head = rows.front();
  head.push_back("TRIAL");
  if (!trials.empty()) {
    for (const auto& [name, value] : trials.front().params) head.push_back(name);
  }
  if (metric) head.push_back(metric->name);
  for (const char* column : {"TIME", "HOSTS", "RESULT"}) head.push_back(column);
  for (const TrialOutcome& out : sorted_outcomes(outcome.trials, metric)) {
    TableRow row{std::to_string(out.trial)};
    for (const auto& [name, value] : trials.at(static_cast<std::size_t>(out.trial)).params) {
      row.push_back(param_text(value));
    }
    if (metric) row.push_back(out.metric ? param_text(*out.metric) : "-");
    row.push_back(out.attempts > 0 ? fmt::format("{:.1f}s", out.seconds) : "-");
    row.push_back(out.hosts.empty() ? "-" : out.hosts);
    std::string result = out.result;
    if (out.result == "failed" || out.result == "launch_error") result += fmt::format(" ({})", out.exit_code);
    if (out.attempts > 1) result += fmt::format(", {} attempts", out.attempts);
    row.push_back(result);
    rows.push_back(std::move(row));
  }
  return align_columns(rows);
}

Json param_json(const ParamValue& value) {
  return std::visit([](const auto& v) { return Json(v); }, value);
}

Json params_json(const Trial& trial) {
  Json params = Json::object();
  for (const auto& [name, value] : trial.params) params[name] = param_json(value);
  return params;
}

Json results_json(const std::string& dir, const std::vector<Trial>& trials, const SweepOutcome& outcome,
                  const std::optional<SweepMetric>& metric, int slots) {
  Json doc{{"sweep", dir}};
  doc["metric"] = metric ? Json{{"name", metric->name}, {"goal", metric->maximize ? "max" : "min"}} : Json(nullptr);
  doc["seconds"] = outcome.seconds;
  doc["slots"] = slots;
  const double available = outcome.seconds * slots;
  doc["utilisation"] = available > 0 ? outcome.busy_slot_seconds / available : 0.0;
  doc["excluded"] = Json::array();
  for (const auto& [host, reason] : outcome.excluded) doc["excluded"].push_back(Json{{"host", host}, {"reason", reason}});
  doc["best"] = nullptr;
  doc["trials"] = Json::array();
  for (const TrialOutcome& out : sorted_outcomes(outcome.trials, metric)) {
    if (out.metric && doc["best"].is_null()) doc["best"] = out.trial;
    Json trial{{"trial", out.trial}, {"params", params_json(trials.at(static_cast<std::size_t>(out.trial)))},
               {"result", out.result}, {"exit_code", out.exit_code}};
    trial["metric"] = out.metric ? Json(*out.metric) : Json(nullptr);
    trial["seconds"] = out.seconds;
    trial["hosts"] = out.hosts;
    trial["attempts"] = out.attempts;
    doc["trials"].push_back(std::move(trial));
  }
  return doc;
}

} // namespace ddl::sweep
