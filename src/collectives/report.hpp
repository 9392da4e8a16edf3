// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/collectives/sweep.hpp"

namespace ddl::coll {

// What the table's preamble says besides the sweep options.
struct ReportContext {
  std::string version;                 // ddl's version
  std::string transport;
  int world_size = 0;
  std::vector<std::string> hosts;      // distinct hosts, in rank order
  std::vector<std::string> facts;      // the transport's own facts
  std::vector<std::string> rank_lines; // "#  Rank  0 Group  0 Pid ..." per rank
};

// nccl-tests' getFloatStr: the first of %.2f, %.1f, %.0f, %.1e that fits.
std::string float_field(double value, int width);

// "#  Rank %2d Group  0 Pid %6d on %10s device %2d [BUS] DESCRIPTION".
std::string format_rank_line(int rank, long pid, std::string_view host, int device,
                             std::string_view bus, std::string_view description);

// all_reduce_perf's output, byte for byte: preamble ('#' lines, ddl's facts
// first), the three header lines, one row per size, and the footer.
std::string format_preamble(const SweepOptions& options, const ReportContext& context);
std::string format_row(const SizeResult& row);
std::string format_footer(const SweepReport& report);
std::string format_table(const SweepOptions& options, const ReportContext& context,
                         const SweepReport& report);

// {"transport", "world_size", "results": [{"size", "count", "type", "redop",
//  "out_of_place": {"time_us", "algbw", "busbw", "wrong"}, "in_place": {..}}],
//  "avg_busbw"}; "wrong" is null when unchecked.
std::string format_json(const SweepReport& report);

// "8", "64K", "128M", "1G" (binary multiples; lower case too); nullopt when not.
std::optional<std::size_t> parse_size(std::string_view text);

} // namespace ddl::coll
