// SPDX-License-Identifier: MIT
#include "src/collectives/report.hpp"

#include <array>
#include <cstdint>
#include <cstdio>

#include <fmt/format.h>

#include "src/util/json.hpp"
#include "src/util/text.hpp"

namespace ddl::coll {

std::string float_field(double value, int width) {
  int power = 0;
  for (std::uint64_t v = 1; value >= static_cast<double>(v) && power < 20; v *= 10) {
    ++power;
  }
  if (power < width - 2) {
    return fmt::format("{:{}.2f}", value, width);
  }
  if (power < width - 1) {
    return fmt::format("{:{}.1f}", value, width);
  }
  if (power < width + 1) {
    return fmt::format("{:{}.0f}", value, width);
  }
  return fmt::format("{:{}.1e}", value, width);
}

std::string format_rank_line(int rank, long pid, std::string_view host, int device,
                             std::string_view bus, std::string_view description) {
  return fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on {:>10} device {:2d} [{}] {}\n", rank,
                     pid, host, device, bus, description);
}

std::string format_preamble(const SweepOptions& options, const ReportContext& context) {
  std::string out;
  out += fmt::format("# ddl {} bench allreduce: transport {}, {} rank{} on {} host{}: {}\n",
                     context.version, context.transport, context.world_size,
                     context.world_size == 1 ? "" : "s", context.hosts.size(),
                     context.hosts.size() == 1 ? "" : "s", fmt::join(context.hosts, ", "));
  for (const auto& fact : context.facts) {
    out += fmt::format("# {}: {}\n", context.transport, fact);
  }
  out += "# Collective test starting: all_reduce_perf\n";
  bool factor = options.step_bytes == 0;
  out += fmt::format(
      "# nThread 1 nGpus 1 minBytes {} maxBytes {} step: {}({}) warmup iters: {} iters: {} "
      "agg iters: 1 validation: {} graph: 0\n",
      options.min_bytes, options.max_bytes, factor ? options.step_factor : options.step_bytes,
      factor ? "factor" : "bytes", options.warmup_iters, options.iters, options.check);
  out += "#\n# Using devices\n";
  for (const auto& line : context.rank_lines) {
    out += line;
  }
  out += "#\n";
  out += fmt::format("# {:10}  {:12}  {:8}  {:6}  {:6}           out-of-place                "
                     "       in-place          \n",
                     "", "", "", "", "");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
                     "{:>6}  {:>6}  {:>6} \n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                     "time", "algbw", "busbw", "#wrong");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  "
                     "{:>6}  {:>6}  {:>6} \n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                     "(GB/s)", "(GB/s)", "");
  return out;
}

namespace {

std::string measurement_fields(const Measurement& m) {
  std::string wrong = m.wrong < 0 ? "   N/A" : fmt::format("{:6}", m.wrong);
  return fmt::format("  {:>7}  {:>6}  {:>6}  {}", float_field(m.time_us, 7),
                     float_field(m.algbw, 6), float_field(m.busbw, 6), wrong);
}

// printf's %g with the default precision of 6.
std::string general(double value) {
  std::array<char, 64> text{};
  std::snprintf(text.data(), text.size(), "%g", value);
  return text.data();
}

Json measurement_json(const Measurement& m) {
  return {{"time_us", m.time_us}, {"algbw", m.algbw}, {"busbw", m.busbw},
          {"wrong", m.wrong < 0 ? Json(nullptr) : Json(m.wrong)}};
}

} // namespace

std::string format_row(const SizeResult& row) {
  return fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:>6}{}{}\n", row.bytes, row.count,
                     to_string(row.type), to_string(row.op), -1,
                     measurement_fields(row.out_of_place), measurement_fields(row.in_place));
}

std::string format_footer(const SweepReport& report) {
  std::string out;
  out += fmt::format("# {:<20} : {} {}\n", "Out of bounds values", 0, "OK");
  out += fmt::format("# {:<20} : {} \n", "Avg bus bandwidth", general(report.avg_busbw));
  out += "#\n";
  out += "# Collective test concluded: all_reduce_perf\n";
  return out;
}

std::string format_table(const SweepOptions& options, const ReportContext& context,
                         const SweepReport& report) {
  std::string out = format_preamble(options, context);
  for (const auto& row : report.rows) {
    out += format_row(row);
  }
  out += format_footer(report);
  return out;
}

std::string format_json(const SweepReport& report) {
  Json results = Json::array();
  for (const auto& row : report.rows) {
    results.push_back({{"size", row.bytes}, {"count", row.count}, {"type", to_string(row.type)},
                       {"redop", to_string(row.op)}, {"out_of_place", measurement_json(row.out_of_place)},
                       {"in_place", measurement_json(row.in_place)}});
  }
  const Json doc = {{"transport", report.transport}, {"world_size", report.world_size},
                    {"results", std::move(results)}, {"avg_busbw", report.avg_busbw}};
  return to_json_text(doc, JsonStyle::spaced) + "\n";
}

std::optional<std::size_t> parse_size(std::string_view text) {
  std::size_t multiplier = 1;
  if (!text.empty()) {
    switch (text.back()) {
    case 'K': case 'k': multiplier = std::size_t{1} << 10; break;
    case 'M': case 'm': multiplier = std::size_t{1} << 20; break;
    case 'G': case 'g': multiplier = std::size_t{1} << 30; break;
    default: break;
    }
    if (multiplier != 1) {
      text.remove_suffix(1);
    }
  }
  auto value = parse_int(text);
  if (!value || static_cast<unsigned long long>(*value) > (std::size_t{1} << 40) / multiplier) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(*value) * multiplier;
}

} // namespace ddl::coll
