// SPDX-License-Identifier: MIT
// A trial's metric: what its rank 0 reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

} // namespace ddl::sweep
