// SPDX-License-Identifier: MIT
// The end of a sweep: every trial sorted by its metric, as a table or JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/sweep/runner.hpp"
#include "src/util/json.hpp"

namespace ddl::sweep {

// The trials in result order: those with a metric best first (ties by
// index), then the rest by index.
std::vector<TrialOutcome> sorted_outcomes(const std::vector<TrialOutcome>& outcomes,
                                          const std::optional<SweepMetric>& metric);

// One row per trial: trial, each parameter, the metric, time, hosts, result.
std::string results_table(const std::vector<Trial>& trials, const SweepOutcome& outcome,
                          const std::optional<SweepMetric>& metric);

// A parameter value as JSON (a number, string or boolean).
Json param_json(const ParamValue& value);
Json params_json(const Trial& trial);

// `ddl sweep --json`: {"sweep", "metric", "seconds", "slots", "utilisation",
// "excluded": [{"host", "reason"}], "best", "trials": [{"trial", "params",
// "result", "exit_code", "metric", "seconds", "hosts", "attempts"}]}.
Json results_json(const std::string& dir, const std::vector<Trial>& trials, const SweepOutcome& outcome,
                  const std::optional<SweepMetric>& metric, int slots);

} // namespace ddl::sweep
