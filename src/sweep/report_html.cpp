// SPDX-License-Identifier: MIT
#include "src/sweep/report_html.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <fmt/core.h>

#include "src/sweep/results.hpp"
#include "src/util/file.hpp"

namespace ddl::sweep {

namespace {

// The chart's geometry, in SVG user units.
constexpr double k_axis_gap = 170;
constexpr double k_left = 90;
constexpr double k_top = 50;
constexpr double k_plot_height = 320;
constexpr double k_failed_gap = 40;  // the "failed / no metric" band below the metric axis
constexpr double k_bottom = 40;

// One vertical axis: a parameter (numeric or categorical) or the metric.
struct Axis {
  std::string name;
  bool numeric = true;
  bool log = false;
  double low = 0;
  double high = 0;
  bool empty = true;                    // numeric: no value at all (no trial has a metric yet)
  std::vector<std::string> categories;  // categorical: in order of first appearance
};

bool is_number(const ParamValue& value) {
  return std::holds_alternative<long long>(value) || std::holds_alternative<double>(value);
}

double number_of(const ParamValue& value) {
  if (const auto* whole = std::get_if<long long>(&value)) return static_cast<double>(*whole);
  return std::get<double>(value);
}

std::string number_text(double value) { return fmt::format("{:.4g}", value); }

// A numeric axis over `values`: on a log scale when they are all positive
// and span two decades or more (learning rates, weight decays).
Axis numeric_axis(std::string name, const std::vector<double>& values) {
  Axis axis;
  axis.name = std::move(name);
  if (values.empty()) return axis;
  const auto [low, high] = std::ranges::minmax(values);
  axis.empty = false;
  axis.low = low;
  axis.high = high;
  axis.log = low > 0 && high / low >= 100;
  return axis;
}

Axis parameter_axis(const std::vector<Trial>& trials, std::size_t index) {
  const std::string& name = trials.front().params.at(index).first;
  const bool numeric = std::ranges::all_of(trials, [&](const Trial& t) { return is_number(t.params.at(index).second); });
  if (numeric) {
    std::vector<double> values;
    for (const Trial& trial : trials) values.push_back(number_of(trial.params.at(index).second));
    return numeric_axis(name, values);
  }
  Axis axis;
  axis.name = name;
  axis.numeric = false;
  for (const Trial& trial : trials) {
    std::string text = param_text(trial.params.at(index).second);
    if (std::ranges::find(axis.categories, text) == axis.categories.end()) axis.categories.push_back(std::move(text));
  }
  return axis;
}

// 0 (bottom) to 1 (top) on the axis.
double fraction(const Axis& axis, double value) {
  if (axis.high <= axis.low) return 0.5;
  if (axis.log) return (std::log(value) - std::log(axis.low)) / (std::log(axis.high) - std::log(axis.low));
  return (value - axis.low) / (axis.high - axis.low);
}

double category_fraction(const Axis& axis, const std::string& text) {
  if (axis.categories.size() < 2) return 0.5;
  const auto at = std::ranges::find(axis.categories, text) - axis.categories.begin();
  return static_cast<double>(at) / static_cast<double>(axis.categories.size() - 1);
}

double value_fraction(const Axis& axis, const ParamValue& value) {
  return axis.numeric ? fraction(axis, number_of(value)) : category_fraction(axis, param_text(value));
}

double axis_x(std::size_t index) { return k_left + k_axis_gap * static_cast<double>(index); }
double fraction_y(double f) { return k_top + (1 - f) * k_plot_height; }
constexpr double k_failed_y = k_top + k_plot_height + k_failed_gap;

bool failed(const TrialOutcome& out) { return out.result == "failed" || out.result == "launch_error"; }

// What a trial's line looks like: its CSS class and colour.
struct LineStyle {
  std::string css;
  std::string colour;
};

// Light blue for the worst metric to dark blue for the best.
std::string metric_colour(double quality) {
  const auto channel = [quality](int worse, int better) {
    return static_cast<int>(std::lround(worse + (better - worse) * std::clamp(quality, 0.0, 1.0)));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(0x9e, 0x08), channel(0xca, 0x51), channel(0xe1, 0x9c));
}

LineStyle line_style(const TrialOutcome& out, std::optional<int> best, const Axis* metric_axis, bool maximize) {
  if (best && out.trial == *best) return {"trial best", "#e6550d"};
  if (failed(out)) return {"trial failed", "#d62728"};
  if (!out.metric || !metric_axis) return {"trial nometric", "#969696"};
  const double f = fraction(*metric_axis, *out.metric);
  return {"trial ok", metric_colour(maximize ? f : 1 - f)};
}

std::string trial_summary(const Trial& trial, const TrialOutcome& out, const std::optional<SweepMetric>& metric) {
  std::string text = fmt::format("trial {}:", out.trial);
  for (const auto& [name, value] : trial.params) text += fmt::format(" {}={}", name, param_text(value));
  if (metric) text += fmt::format(" {}={}", metric->name, out.metric ? param_text(*out.metric) : "-");
  return text + fmt::format(" ({})", out.result);
}

std::string axis_svg(const Axis& axis, std::size_t index, bool metric_axis) {
  const double x = axis_x(index);
  std::string svg = fmt::format("<g class=\"axis\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", x, k_top,
                                k_top + k_plot_height);
  svg += fmt::format("<text class=\"axis-name\" x=\"{}\" y=\"{}\">{}{}</text>", x, k_top - 22,
                     html_escape(axis.name), axis.log ? " (log)" : "");
  const auto tick = [&](double f, const std::string& label) {
    svg += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
                       "<text class=\"tick-label\" x=\"{3}\" y=\"{4}\">{5}</text>",
                       x - 4, fraction_y(f), x + 4, x - 8, fraction_y(f) + 4, html_escape(label));
  };
  if (!axis.numeric) {
    for (const std::string& category : axis.categories) tick(category_fraction(axis, category), category);
  } else if (axis.high > axis.low) {
    tick(0, number_text(axis.low));
    tick(0.5, number_text(axis.log ? std::sqrt(axis.low * axis.high) : (axis.low + axis.high) / 2));
    tick(1, number_text(axis.high));
  } else if (!axis.empty) {
    tick(0.5, number_text(axis.low));
  }
  if (metric_axis) {
    svg += fmt::format("<text class=\"failed-label\" x=\"{}\" y=\"{}\">failed / no metric</text>", x - 8,
                       k_failed_y + 4);
  }
  return svg + "</g>";
}

// The metric's axis over the trials that have one.
std::optional<Axis> metric_axis_of(const SweepOutcome& outcome, const std::optional<SweepMetric>& metric) {
  if (!metric) return std::nullopt;
  std::vector<double> values;
  for (const TrialOutcome& out : outcome.trials) {
    if (out.metric) values.push_back(*out.metric);
  }
  Axis axis = numeric_axis(metric->name + (metric->maximize ? " (max)" : " (min)"), values);
  axis.log = false;  // a loss near zero reads better linear
  return axis;
}

std::optional<int> best_trial(const SweepOutcome& outcome, const std::optional<SweepMetric>& metric) {
  if (!metric) return std::nullopt;
  for (const TrialOutcome& out : sorted_outcomes(outcome.trials, metric)) {
    if (out.metric) return out.trial;
  }
  return std::nullopt;
}

std::string trial_line(const Trial& trial, const TrialOutcome& out, const std::vector<Axis>& axes,
                       const std::optional<Axis>& metric_axis, const std::optional<SweepMetric>& metric,
                       std::optional<int> best) {
  std::string points;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", axis_x(i),
                          fraction_y(value_fraction(axes[i], trial.params.at(i).second)));
  }
  if (metric_axis) {
    const double y = out.metric ? fraction_y(fraction(*metric_axis, *out.metric)) : k_failed_y;
    points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", axis_x(axes.size()), y);
  }
  const LineStyle style = line_style(out, best, metric_axis ? &*metric_axis : nullptr, metric && metric->maximize);
  std::string line = fmt::format("<polyline class=\"{}\" stroke=\"{}\" points=\"{}\"><title>{}</title></polyline>",
                                 style.css, style.colour, points, html_escape(trial_summary(trial, out, metric)));
  if (best && out.trial == *best && metric_axis) {
    line += fmt::format("<circle class=\"best-dot\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\"/>"
                        "<text class=\"best-label\" x=\"{:.1f}\" y=\"{:.1f}\">best: trial {}</text>",
                        axis_x(axes.size()), fraction_y(fraction(*metric_axis, *out.metric)), axis_x(axes.size()) + 10,
                        fraction_y(fraction(*metric_axis, *out.metric)) + 4, out.trial);
  }
  return line;
}

std::string chart_svg(const std::vector<Trial>& trials, const SweepOutcome& outcome,
                      const std::optional<SweepMetric>& metric) {
  std::vector<Axis> axes;
  for (std::size_t i = 0; !trials.empty() && i < trials.front().params.size(); ++i) {
    axes.push_back(parameter_axis(trials, i));
  }
  const std::optional<Axis> metric_axis = metric_axis_of(outcome, metric);
  const std::size_t count = axes.size() + (metric_axis ? 1 : 0);
  const double width = axis_x(std::max<std::size_t>(count, 1) - 1) + 150;  // room for "best: trial N"
  const double height = k_failed_y + k_bottom;
  std::string svg = fmt::format("<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                                "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"parallel coordinates\">",
                                width, height);
  const std::optional<int> best = best_trial(outcome, metric);
  // The best trial last, on top of the others; trials not run are not drawn.
  std::vector<const TrialOutcome*> order;
  for (const TrialOutcome& out : outcome.trials) {
    if (out.result != "not_run" && !(best && out.trial == *best)) order.push_back(&out);
  }
  for (const TrialOutcome& out : outcome.trials) {
    if (best && out.trial == *best) order.push_back(&out);
  }
  for (const TrialOutcome* out : order) {
    svg += trial_line(trials.at(static_cast<std::size_t>(out->trial)), *out, axes, metric_axis, metric, best);
  }
  for (std::size_t i = 0; i < axes.size(); ++i) svg += axis_svg(axes[i], i, false);
  if (metric_axis) svg += axis_svg(*metric_axis, axes.size(), true);
  return svg + "</svg>";
}

std::string table_html(const std::vector<Trial>& trials, const SweepOutcome& outcome,
                       const std::optional<SweepMetric>& metric) {
  std::string html = "<table id=\"trials\"><thead><tr><th>trial</th>";
  if (!trials.empty()) {
    for (const auto& [name, value] : trials.front().params) html += "<th>" + html_escape(name) + "</th>";
  }
  if (metric) html += "<th>" + html_escape(metric->name) + "</th>";
  html += "<th>time</th><th>hosts</th><th>result</th></tr></thead><tbody>";
  const std::optional<int> best = best_trial(outcome, metric);
  for (const TrialOutcome& out : sorted_outcomes(outcome.trials, metric)) {
    const bool is_best = best && out.trial == *best;
    html += fmt::format("<tr class=\"{}\"><td>{}{}</td>", is_best ? "best" : failed(out) ? "failed" : html_escape(out.result),
                        out.trial, is_best ? " &#9733; best" : "");
    for (const auto& [name, value] : trials.at(static_cast<std::size_t>(out.trial)).params) {
      html += "<td>" + html_escape(param_text(value)) + "</td>";
    }
    if (metric) html += "<td>" + (out.metric ? html_escape(param_text(*out.metric)) : std::string("-")) + "</td>";
    html += out.attempts > 0 ? fmt::format("<td>{:.1f}s</td>", out.seconds) : std::string("<td>-</td>");
    html += "<td>" + html_escape(out.hosts.empty() ? "-" : out.hosts) + "</td>";
    std::string result = out.result;
    if (failed(out)) result += fmt::format(" (exit {})", out.exit_code);
    if (out.attempts > 1) result += fmt::format(", {} attempts", out.attempts);
    html += "<td>" + html_escape(result) + "</td></tr>";
  }
  return html + "</tbody></table>";
}

std::string summary_html(const SweepOutcome& outcome, const std::optional<SweepMetric>& metric) {
  int ok = 0;
  int bad = 0;
  int other = 0;
  for (const TrialOutcome& out : outcome.trials) {
    (out.result == "ok" ? ok : failed(out) ? bad : other) += 1;
  }
  std::string text = fmt::format("{} trials: {} ok, {} failed, {} not finished.", outcome.trials.size(), ok, bad, other);
  const std::optional<int> best = best_trial(outcome, metric);
  if (best) {
    const TrialOutcome& out = outcome.trials.at(static_cast<std::size_t>(*best));
    text += fmt::format(" Best: trial {}, {} = {}.", *best, metric->name, param_text(*out.metric));
  }
  return "<p id=\"summary\">" + html_escape(text) + "</p>";
}

constexpr const char* k_style = R"(body{font:14px sans-serif;margin:24px;color:#222}
h1{font-size:20px}
svg{background:#fff;border:1px solid #ddd}
.trial{fill:none;stroke-width:1.6;opacity:.85}
.trial.failed{stroke-dasharray:6 4}
.trial.nometric{stroke-dasharray:2 3}
.trial.best{stroke-width:4;opacity:1}
.axis line{stroke:#333;stroke-width:1.2}
.axis-name{font-weight:bold;text-anchor:middle}
.tick-label,.failed-label{text-anchor:end;font-size:11px;fill:#444}
.failed-label{fill:#d62728}
.best-dot{fill:#e6550d}
.best-label{fill:#e6550d;font-weight:bold;font-size:12px}
table{border-collapse:collapse;margin-top:20px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
tr.best{background:#fdd0a2;font-weight:bold}
tr.failed{background:#fcdede;color:#900}
.legend span{margin-right:18px}
)";

} // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string report_html(const std::string& title, const std::vector<Trial>& trials, const SweepOutcome& outcome,
                        const std::optional<SweepMetric>& metric) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src 'unsafe-inline'; img-src data:\">"
                     "<link rel=\"icon\" href=\"data:,\">";
  html += "<title>ddl sweep: " + html_escape(title) + "</title><style>" + k_style + "</style></head><body>\n";
  html += "<h1>ddl sweep: " + html_escape(title) + "</h1>\n" + summary_html(outcome, metric) + "\n";
  html += "<p class=\"legend\"><span style=\"color:#e6550d\">&#9644; best</span>"
          "<span style=\"color:#08519c\">&#9644; ok (darker: better)</span>"
          "<span style=\"color:#d62728\">- - failed</span><span style=\"color:#969696\">&#183;&#183; no metric</span></p>\n";
  html += chart_svg(trials, outcome, metric) + "\n" + table_html(trials, outcome, metric) + "\n</body></html>\n";
  return html;
}

Result<std::string> write_report(const std::string& dir, const std::string& title, const std::vector<Trial>& trials,
                                 const SweepOutcome& outcome, const std::optional<SweepMetric>& metric) {
  const std::string path = dir + "/" + k_report_name;
  const std::string temporary = path + ".tmp";
  const std::string text = report_html(title, trials, outcome, metric);
  auto problem = [&](const char* what) {
    return fail(ExitCode::launch, fmt::format("cannot write {}: {}: {}", path, what, std::strerror(errno)));
  };
  ::unlink(temporary.c_str());  // a new file of our own, never one that was there (O_EXCL, no link followed)
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return problem("open");
  if (!write_fully(fd, text)) {
    ::close(fd);
    return problem("write");
  }
  if (::close(fd) != 0) return problem("close");
  if (std::rename(temporary.c_str(), path.c_str()) != 0) return problem("rename");
  return path;
}

} // namespace ddl::sweep
