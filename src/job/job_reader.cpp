// SPDX-License-Identifier: MIT
#include "src/job/job_reader.hpp"

#include <algorithm>
#include <climits>
#include <tuple>

#include <fmt/core.h>

#include "src/job/hostlist.hpp"
#include "src/util/text.hpp"

namespace ddl::job_detail {

Position position_of(const toml::source_region& region) {
  return Position{region.begin.line, region.begin.column};
}

void Diagnostics::at(Position where, std::string message) {
  entries_.push_back(Entry{where, entries_.size(), std::move(message)});
}

std::string Diagnostics::text() const {
  std::vector<Entry> sorted = entries_;
  // Option problems (line 0) go last; file problems in file order.
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    auto key = [](const Entry& e) {
      return std::tuple(e.where.line == 0, e.where.line, e.where.column, e.order);
    };
    return key(a) < key(b);
  });
  std::string text;
  for (const Entry& entry : sorted) {
    if (!text.empty()) {
      text += '\n';
    }
    if (entry.where.line != 0) {
      text += fmt::format("{}:{}:{}: ", origin_, entry.where.line, entry.where.column);
    }
    text += entry.message;
  }
  return text;
}

std::string_view type_phrase(toml::node_type type) {
  switch (type) {
  case toml::node_type::table: return "a table";
  case toml::node_type::array: return "an array";
  case toml::node_type::string: return "a string";
  case toml::node_type::integer: return "an integer";
  case toml::node_type::floating_point: return "a floating-point number";
  case toml::node_type::boolean: return "a boolean";
  case toml::node_type::date: return "a date";
  case toml::node_type::time: return "a time";
  case toml::node_type::date_time: return "a date-time";
  case toml::node_type::none: break;
  }
  return "nothing";
}

namespace {

// "; did you mean 'x'?" or "; it belongs in [s]" or "".
std::string unknown_key_hint(std::string_view key, std::string_view section) {
  std::string near = did_you_mean(key, section_keys(section));
  if (!near.empty()) {
    return fmt::format("; did you mean '{}'?", near);
  }
  for (const std::string& other : section_names()) {
    const auto& keys = section_keys(other);
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
      return fmt::format("; it belongs in [{}]", other);
    }
  }
  return {};
}

} // namespace

Section::Section(const toml::table* table, std::string name, Diagnostics& diag)
    : table_(table), name_(std::move(name)), diag_(diag) {
  if (table_ == nullptr) {
    return;
  }
  const auto& known = section_keys(name_);
  for (auto&& [key, value] : *table_) {
    if (std::find(known.begin(), known.end(), key.str()) == known.end()) {
      diag_.at(position_of(key.source()),
               fmt::format("unknown key {} in [{}]{}", quote_input(key.str()), name_,
                           unknown_key_hint(key.str(), name_)));
    }
  }
}

const toml::node* Section::node(std::string_view key) const {
  return table_ == nullptr ? nullptr : table_->get(key);
}

void Section::wrong_type(std::string_view key, const toml::node& value,
                         std::string_view expected) const {
  diag_.at(value, fmt::format("{}: expected {}, got {}", label(key), expected,
                              type_phrase(value.type())));
}

const toml::array* Section::read_array(std::string_view key, std::string_view expected) const {
  const toml::node* value = node(key);
  if (value == nullptr) {
    return nullptr;
  }
  const auto* items = value->as_array();
  if (items == nullptr) {
    wrong_type(key, *value, expected);
  }
  return items;
}

bool Section::read_string(std::string_view key, std::string& out) const {
  const toml::node* value = node(key);
  if (value == nullptr) {
    return false;
  }
  const auto* text = value->as_string();
  if (text == nullptr) {
    wrong_type(key, *value, "a string");
    return false;
  }
  if (text->get().find('\0') != std::string::npos) {
    diag_.at(*value, fmt::format("{}: contains a NUL byte", label(key)));
    return false;
  }
  out = text->get();
  return true;
}

bool Section::read_bool(std::string_view key, bool& out) const {
  const toml::node* value = node(key);
  if (value == nullptr) {
    return false;
  }
  const auto* flag = value->as_boolean();
  if (flag == nullptr) {
    wrong_type(key, *value, "a boolean (true or false)");
    return false;
  }
  out = flag->get();
  return true;
}

bool Section::read_int(std::string_view key, int& out, long long min, long long max) const {
  const toml::node* value = node(key);
  if (value == nullptr) {
    return false;
  }
  const auto* number = value->as_integer();
  if (number == nullptr) {
    wrong_type(key, *value, "an integer");
    return false;
  }
  long long got = number->get();
  if (got < min || got > max) {
    diag_.at(*value, fmt::format("{}: {}", label(key), range_message(min, max)));
    return false;
  }
  out = static_cast<int>(got);
  return true;
}

bool Section::read_duration(std::string_view key, Millis& out, bool allow_zero) const {
  std::string text;
  const toml::node* value = node(key);
  if (value == nullptr) {
    return false;
  }
  if (!value->is_string()) {
    wrong_type(key, *value, "a duration such as \"30s\"");
    return false;
  }
  if (!read_string(key, text)) {
    return false;
  }
  std::optional<Millis> parsed = parse_duration(text);
  if (!parsed) {
    diag_.at(*value, fmt::format("{}: {}", label(key), duration_problem(text)));
    return false;
  }
  if (!allow_zero && parsed->count() == 0) {
    diag_.at(*value, fmt::format("{}: must be longer than 0", label(key)));
    return false;
  }
  out = *parsed;
  return true;
}

std::string range_message(long long min, long long max) {
  if (max == INT_MAX) {
    return fmt::format("must be at least {}", min);
  }
  if (max == min + 1) {
    return fmt::format("must be {} or {}", min, max);
  }
  return fmt::format("must be between {} and {}", min, max);
}

std::string duration_problem(std::string_view text) {
  return fmt::format("invalid duration {}; use a number and a unit: 500ms, 30s, 5m, 2h, 1h30m",
                     quote_input(text));
}

std::string choice_problem(std::string_view value, const std::vector<std::string>& choices) {
  std::string list;
  for (const std::string& choice : choices) {
    list += (list.empty() ? "" : ", ") + choice;
  }
  std::string message = fmt::format("{} is not one of {}", quote_input(value), list);
  std::string near = did_you_mean(value, choices);
  if (!near.empty()) {
    message += fmt::format("; did you mean '{}'?", near);
  }
  return message;
}

Result<std::vector<HostSpec>> expand_checked_hosts(std::string_view spec) {
  auto hosts = expand_hostlist(spec);
  if (!hosts) {
    return hosts;
  }
  for (const HostSpec& host : *hosts) {
    if (auto why = host_name_problem(host.name)) {
      return fail(ExitCode::usage, fmt::format("bad host name {}: {}", quote_input(host.name), *why));
    }
  }
  return hosts;
}

} // namespace ddl::job_detail
