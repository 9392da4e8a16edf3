// SPDX-License-Identifier: MIT
// SWEEP_DIR/report.html: the sweep as a page to look at, as Katib's or W&B's
// sweeps are: the trials table and a parallel-coordinates chart of the
// parameters against the metric (the best trial marked, failed trials drawn
// as failed). One self-contained file: inline SVG and CSS, no script, no
// network (its Content-Security-Policy forbids any). Every value a user
// wrote (parameter names and values, the metric's name, hosts) is escaped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/job/sweep_spec.hpp"
#include "src/sweep/runner.hpp"
#include "src/sweep/trials.hpp"
#include "src/util/error.hpp"

namespace ddl::sweep {

inline constexpr const char* k_report_name = "report.html";

// `text` with & < > " ' as HTML character references.
std::string html_escape(std::string_view text);

// The whole page; `title`: the job's name.
std::string report_html(const std::string& title, const std::vector<Trial>& trials, const SweepOutcome& outcome,
                        const std::optional<SweepMetric>& metric);

// Writes DIR/report.html (through a temporary file and rename); its path.
Result<std::string> write_report(const std::string& dir, const std::string& title, const std::vector<Trial>& trials,
                                 const SweepOutcome& outcome, const std::optional<SweepMetric>& metric);

} // namespace ddl::sweep
