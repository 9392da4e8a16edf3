// SPDX-License-Identifier: MIT
// A trial's metric: what its rank 0 reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl::sweep {

// The value of the last "NAME=VALUE" or "NAME: VALUE" in `line` (NAME at a
// word start, spaces allowed around the separator, VALUE a finite number).
std::optional<double> metric_in_line(std::string_view line, std::string_view name);

// The value in the last line of the file at `path` that holds one (rank 0's
// log); nullopt when none does or it cannot be read.
std::optional<double> metric_in_log(const std::string& path, std::string_view name);

// A JSON object's member `name` (a number) in the file at `path`
// (DDL_TRIAL_DIR/metrics.json); nullopt when absent or not such a file.
std::optional<double> metric_in_json(const std::string& path, std::string_view name);

// A trial's metric and the file it came from.
struct FoundMetric {
  double value = 0;
  std::string source;
};

// The metric `name` of a trial: TRIAL_DIR/metrics.json (DDL_TRIAL_DIR) when
// it holds it, else the last line that holds it in the first of `logs` (rank
// 0's output of the gang's last attempt: its one log, or its split .stdout.log
// then .stderr.log) that has one; nullopt when none does.
std::optional<FoundMetric> find_metric(const std::string& trial_dir, const std::vector<std::string>& logs,
                                       std::string_view name);

} // namespace ddl::sweep
