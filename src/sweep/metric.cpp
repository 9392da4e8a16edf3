// SPDX-License-Identifier: MIT
#include "src/sweep/metric.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>

#include "src/util/file.hpp"
#include "src/util/json.hpp"

namespace ddl::sweep {

namespace {

// metrics.json is small; a larger file is not one.
constexpr std::size_t k_max_metrics_json_bytes = 1 << 20;

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == '/';
}

std::size_t skip_spaces(std::string_view text, std::size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) {
    ++at;
  }
  return at;
}

// The number at `at` (from_chars rejects a leading '+', so skip it).
std::optional<double> number_at(std::string_view text, std::size_t at) {
  if (at < text.size() && text[at] == '+') {
    ++at;
  }
  double value = 0;
  auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (error != std::errc{} || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

} // namespace

std::optional<double> metric_in_line(std::string_view line, std::string_view name) {
  std::optional<double> found;
  for (std::size_t at = line.find(name); at != std::string_view::npos; at = line.find(name, at + 1)) {
    if (at > 0 && is_name_char(line[at - 1])) {
      continue;
    }
    std::size_t next = skip_spaces(line, at + name.size());
    if (next >= line.size() || (line[next] != '=' && line[next] != ':')) {
      continue;
    }
    if (auto value = number_at(line, skip_spaces(line, next + 1))) {
      found = value;
    }
  }
  return found;
}

std::optional<double> metric_in_log(const std::string& path, std::string_view name) {
  std::ifstream in(path, std::ios::binary);
  std::optional<double> found;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(name) == std::string::npos) {
      continue;
    }
    if (auto value = metric_in_line(line, name)) {
      found = value;
    }
  }
  return found;
}

std::optional<double> metric_in_json(const std::string& path, std::string_view name) {
  CappedRead file = read_capped(path, k_max_metrics_json_bytes);
  if (file.status != CappedRead::Status::ok) {
    return std::nullopt;
  }
  Json doc = Json::parse(file.text, nullptr, false);
  if (!doc.is_object()) {
    return std::nullopt;
  }
  auto member = doc.find(std::string(name));
  if (member == doc.end() || !member->is_number()) {
    return std::nullopt;
  }
  double value = member->get<double>();
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

std::optional<FoundMetric> find_metric(const std::string& trial_dir, const std::vector<std::string>& logs,
                                       std::string_view name) {
  const std::string json = trial_dir + "/metrics.json";
  if (auto value = metric_in_json(json, name)) {
    return FoundMetric{*value, json};
  }
  for (const std::string& log : logs) {
    if (auto value = metric_in_log(log, name)) {
      return FoundMetric{*value, log};
    }
  }
  return std::nullopt;
}

} // namespace ddl::sweep
