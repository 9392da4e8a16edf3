// SPDX-License-Identifier: MIT
// Reads [sweep] and [sweep.parameters] (DESIGN.md "Next capabilities").
#include <algorithm>
#include <array>
#include <charconv>
#include <cctype>
#include <climits>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/text.hpp"

namespace ddl {

std::string param_text(const ParamValue& value) {
  if (const auto* number = std::get_if<long long>(&value)) return std::to_string(*number);
  if (const auto* real = std::get_if<double>(&value)) {
    std::array<char, 64> buffer{};  // shortest round-trip form, as the JSON output writes it
    auto written = std::to_chars(buffer.data(), buffer.data() + buffer.size(), *real);
    return std::string(buffer.data(), written.ptr);
  }
  if (const auto* flag = std::get_if<bool>(&value)) return *flag ? "true" : "false";
  return std::get<std::string>(value);
}

std::string param_env_name(const std::string& name) {
  std::string env = "DDL_PARAM_";
  for (char c : name) {
    env += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return env;
}

namespace job_detail {

namespace {

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names = {"grid", "random", "list"};
  return names;
}

// A metric name as it appears in "name=value" lines: no '=' or ':'; blanks
// only between words ("test loss", as scripts print it).
bool is_metric_name(std::string_view name) {
  return !name.empty() && name.front() != ' ' && name.back() != ' ' && std::ranges::all_of(name, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == '/' ||
           c == ' ';
  });
}

std::optional<ParamValue> list_value(const toml::node& item) {
  if (const auto* text = item.as_string()) return ParamValue{text->get()};
  if (const auto* number = item.as_integer()) return ParamValue{number->get()};
  if (const auto* real = item.as_floating_point()) return ParamValue{real->get()};
  if (const auto* flag = item.as_boolean()) return ParamValue{flag->get()};
  return std::nullopt;
}

void read_values(const toml::array& items, const std::string& label, SweepParameter& param, Diagnostics& diag) {
  if (items.empty()) {
    diag.at(items, label + ": must list at least one value");
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const toml::node& item = *items.get(i);
    auto value = list_value(item);
    if (!value) {
      diag.at(item, fmt::format("{}[{}]: expected a string, number or boolean, got {}", label, i,
                                type_phrase(item.type())));
    } else if (const auto* text = std::get_if<std::string>(&*value); text && text->find('\0') != std::string::npos) {
      diag.at(item, fmt::format("{}[{}]: contains a NUL byte", label, i));
    } else if (const auto* real = std::get_if<double>(&*value); real && !std::isfinite(*real)) {
      diag.at(item, fmt::format("{}[{}]: must be a finite number", label, i));
    } else {
      param.values.push_back(std::move(*value));
    }
  }
}

std::optional<double> range_bound(const toml::table& table, std::string_view key, const std::string& label,
                                  bool& integral, Diagnostics& diag) {
  const toml::node* bound = table.get(key);
  if (bound == nullptr) {
    diag.at(table, fmt::format("{}: needs '{}'", label, key));
    return std::nullopt;
  }
  if (const auto* number = bound->as_integer()) return static_cast<double>(number->get());
  integral = false;
  if (const auto* real = bound->as_floating_point(); real && std::isfinite(real->get())) return real->get();
  diag.at(*bound, fmt::format("{}.{}: expected a finite number, got {}", label, key, type_phrase(bound->type())));
  return std::nullopt;
}

// "scale" or "type": one of `choices`, else the first.
std::size_t range_choice(const toml::table& table, std::string_view key, const std::vector<std::string>& choices,
                         const std::string& label, Diagnostics& diag) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return 0;
  const auto* text = node->as_string();
  auto found = text ? std::ranges::find(choices, text->get()) : choices.end();
  if (found == choices.end()) {
    diag.at(*node, fmt::format("{}.{}: {}", label, key,
                               text ? choice_problem(text->get(), choices)
                                    : fmt::format("expected a string, got {}", type_phrase(node->type()))));
    return 0;
  }
  return static_cast<std::size_t>(found - choices.begin());
}

void read_range(const toml::table& table, const std::string& label, SweepParameter& param, Diagnostics& diag) {
  static const std::vector<std::string> keys = {"min", "max", "scale", "type"};
  for (auto&& [key, value] : table) {
    if (std::ranges::find(keys, key.str()) == keys.end()) {
      std::string near = did_you_mean(key.str(), keys);
      diag.at(position_of(key.source()), fmt::format("unknown key {} in {}{}", quote_input(key.str()), label,
                                                     near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
    }
  }
  bool integral = true;
  auto min = range_bound(table, "min", label, integral, diag);
  auto max = range_bound(table, "max", label, integral, diag);
  ParamRange range;
  range.scale = static_cast<RangeScale>(range_choice(table, "scale", {"linear", "log"}, label, diag));
  // Without a type, whole-number bounds make an int range.
  range.integer = table.get("type") ? range_choice(table, "type", {"float", "int"}, label, diag) == 1 : integral;
  if (!min || !max) return;
  range.min = *min;
  range.max = *max;
  if (range.min >= range.max) {
    diag.at(table, fmt::format("{}: min must be less than max", label));
  } else if (range.scale == RangeScale::log && range.min <= 0) {
    diag.at(table, fmt::format("{}: scale = \"log\" needs min > 0", label));
  } else if (range.integer && (range.min != std::floor(range.min) || range.max != std::floor(range.max))) {
    diag.at(table, fmt::format("{}: type = \"int\" needs whole numbers for min and max", label));
  } else {
    param.range = range;
  }
}

void read_parameter(const toml::key& key, const toml::node& value, SweepSection& sweep, Diagnostics& diag) {
  const std::string label = "sweep.parameters." + std::string(key.str());
  SweepParameter param;
  param.name = std::string(key.str());
  if (!is_env_name(param.name)) {
    diag.at(position_of(key.source()), fmt::format("sweep.parameters: {} is not a valid parameter name "
                                                   "([A-Za-z_][A-Za-z0-9_]*)", quote_input(param.name)));
    return;
  }
  for (const SweepParameter& other : sweep.parameters) {
    if (param_env_name(other.name) == param_env_name(param.name)) {
      diag.at(position_of(key.source()), fmt::format("sweep.parameters: {} and {} are both {}", quote_input(other.name),
                                                     quote_input(param.name), param_env_name(param.name)));
      return;
    }
  }
  if (const auto* items = value.as_array()) {
    read_values(*items, label, param, diag);
  } else if (const auto* table = value.as_table()) {
    read_range(*table, label, param, diag);
  } else {
    diag.at(value, fmt::format("{}: expected a list of values or a range {{ min, max }}, got {}", label,
                               type_phrase(value.type())));
    return;
  }
  sweep.parameters.push_back(std::move(param));
}

void read_metric(const Section& s, SweepSection& sweep) {
  const toml::node* node = s.node("metric");
  if (node == nullptr) return;
  const auto* table = node->as_table();
  if (table == nullptr) {
    s.wrong_type("metric", *node, "a table such as { name = \"loss\", goal = \"min\" }");
    return;
  }
  Section metric(table, "sweep.metric", s.diag());
  SweepMetric out;
  if (!metric.read_string("name", out.name)) {
    if (metric.node("name") == nullptr) s.diag().at(*node, "sweep.metric: needs a name, e.g. { name = \"loss\" }");
    return;
  }
  if (!is_metric_name(out.name)) {
    s.diag().at(*metric.node("name"), fmt::format("sweep.metric.name: {} is not a metric name (letters, digits, "
                                                  "_ - . / and blanks between words)", quote_input(out.name)));
    return;
  }
  std::string goal = "min";
  if (metric.read_string("goal", goal) && goal != "min" && goal != "max") {
    s.diag().at(*metric.node("goal"), "sweep.metric.goal: " + choice_problem(goal, {"min", "max"}));
    return;
  }
  out.maximize = goal == "max";
  sweep.metric = out;
}

// How many trials grid or list make; -1 after an error. Ranges were already
// refused for grid and list.
long long count_trials(const SweepSection& sweep, const toml::node& where, Diagnostics& diag) {
  if (sweep.method == SweepMethod::random) return sweep.samples;
  long long count = 1;
  for (const SweepParameter& param : sweep.parameters) {
    const auto n = static_cast<long long>(param.values.size());
    if (sweep.method == SweepMethod::list) {
      if (&param != &sweep.parameters.front() && n != count) {
        diag.at(where, fmt::format("sweep.parameters.{}: method = \"list\" needs lists of one length; {} has {} "
                                   "values, {} has {}", param.name, sweep.parameters.front().name, count,
                                   param.name, n));
        return -1;
      }
      count = n;
    } else if (n > 0 && count > k_max_sweep_trials / n) {
      count = k_max_sweep_trials + 1;
    } else {
      count *= n;
    }
  }
  return count;
}

void read_parameters(const Section& s, const toml::node& section, SweepSection& sweep) {
  const toml::node* node = s.node("parameters");
  const auto* table = node ? node->as_table() : nullptr;
  if (node != nullptr && table == nullptr) {
    s.wrong_type("parameters", *node, "a table of NAME = [values] or NAME = { min, max }");
    return;
  }
  if (table == nullptr || table->empty()) {
    s.diag().at(node ? *node : section, "sweep.parameters: give at least one parameter");
    return;
  }
  std::vector<std::pair<Position, std::pair<const toml::key*, const toml::node*>>> entries;
  for (auto&& [key, value] : *table) {
    entries.push_back({position_of(key.source()), {&key, &value}});
  }
  std::ranges::stable_sort(entries, [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  for (const auto& [where, entry] : entries) {
    read_parameter(*entry.first, *entry.second, sweep, s.diag());
  }
  for (const SweepParameter& param : sweep.parameters) {
    if (param.range && sweep.method != SweepMethod::random) {
      s.diag().at(*table->get(param.name), fmt::format("sweep.parameters.{}: a range needs method = \"random\"; "
                                                       "grid and list take a list of values", param.name));
    }
  }
}

} // namespace

void read_sweep(const SectionInput& in) {
  const Section s = in.keys();
  const toml::table* section = in.table();
  if (section == nullptr) return;
  SweepSection sweep;
  Diagnostics& diag = s.diag();
  std::string method = "grid";
  if (s.read_string("method", method)) {
    auto found = std::ranges::find(method_names(), method);
    if (found == method_names().end()) {
      diag.at(*s.node("method"), "sweep.method: " + choice_problem(method, method_names()));
    } else {
      sweep.method = static_cast<SweepMethod>(found - method_names().begin());
    }
  }
  const bool random = sweep.method == SweepMethod::random;
  if (s.read_int("samples", sweep.samples, 1, k_max_sweep_trials) && !random) {
    diag.at(*s.node("samples"), "sweep.samples: only for method = \"random\"");
  } else if (random && s.node("samples") == nullptr) {
    diag.at(*section, "sweep: method = \"random\" needs samples = N");
  }
  int seed = 1;
  if (s.read_int("seed", seed, 0, INT_MAX)) {
    sweep.seed = static_cast<std::uint64_t>(seed);
    if (!random) diag.at(*s.node("seed"), "sweep.seed: only for method = \"random\"");
  }
  s.read_int("max_parallel", sweep.max_parallel, 0, INT_MAX);
  if (int np = 1; s.read_int("np", np, 1, k_max_world_size)) {
    sweep.np = np;
  }
  s.read_int("retries", sweep.retries, 0, 100);
  read_metric(s, sweep);
  read_parameters(s, *section, sweep);
  if (diag.empty()) {
    const long long trials = count_trials(sweep, *section, diag);
    if (trials > k_max_sweep_trials) {
      diag.at(*section, fmt::format("sweep: the grid has more than {} trials", k_max_sweep_trials));
    }
  }
  in.job.sweep = std::move(sweep);
}

} // namespace job_detail

} // namespace ddl
