// SPDX-License-Identifier: MIT
// Hostfiles: OpenMPI / DeepSpeed ("host slots=N") and MPICH ("host:N").
#include <array>
#include <optional>
#include <unordered_map>
#include <variant>
#include <fmt/core.h>

#include "src/inventory/inventory.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

// The OpenMPI v4.1 lexer's spellings; max_slots is accepted and checked, but
// a plan never puts more ranks on a host than its slots.
constexpr std::array k_slot_keys = {"slots", "count", "cpu"};
constexpr std::array k_max_slot_keys = {"max_slots", "max-slots", "slots_max", "slots-max",
                                        "max_count", "max-count", "count_max", "count-max",
                                        "max_cpu",   "max-cpu",   "cpu_max",   "cpu-max"};
constexpr long long k_max_slots = k_max_world_size;

template <std::size_t N> bool is_one_of(std::string_view word, const std::array<const char*, N>& set) {
  for (const char* item : set) {
    if (word == item) {
      return true;
    }
  }
  return false;
}

struct LineError {
  std::string message;
};

std::optional<int> slot_count(std::string_view text) {
  auto value = parse_int(text);
  if (!value || *value < 1 || *value > k_max_slots) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::string bad_slots(std::string_view text) {
  return fmt::format("bad slot count '{}': expected a whole number from 1 to {}", text, k_max_slots);
}

// Joins "slots = 4" into "slots=4", then splits on blanks.
std::vector<std::string> words_of(std::string_view line) {
  std::string joined;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      std::size_t next = line.find_first_not_of(" \t", i);
      const bool around_eq = (next != std::string_view::npos && line[next] == '=') ||
                             (!joined.empty() && joined.back() == '=');
      if (!around_eq && !joined.empty() && joined.back() != ' ') {
        joined += ' ';
      }
      i = (next == std::string_view::npos ? line.size() : next) - 1;
      continue;
    }
    joined += c;
  }
  std::vector<std::string> words;
  for (auto& word : split(joined, ' ')) {
    if (!word.empty()) {
      words.push_back(std::move(word));
    }
  }
  return words;
}

// "host", "host:N", "[v6]", "[v6]:N", or a bare IPv6 address (several ':').
std::variant<HostSpec, LineError> parse_host_word(std::string_view word) {
  HostSpec spec;
  std::string_view slots_text;
  bool has_slots = false;
  if (word.starts_with('[')) {
    const auto close = word.find(']');
    if (close == std::string_view::npos) {
      return LineError{fmt::format("'{}' has '[' without ']'", word)};
    }
    spec.name = std::string(word.substr(1, close - 1));
    std::string_view rest = word.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return LineError{fmt::format("unexpected '{}' after ']' in '{}'", rest, word)};
      }
      slots_text = rest.substr(1);
      has_slots = true;
    }
  } else if (auto colon = word.find(':');
             colon != std::string_view::npos && word.find(':', colon + 1) == std::string_view::npos) {
    spec.name = std::string(word.substr(0, colon));
    slots_text = word.substr(colon + 1);
    has_slots = true;
  } else {
    spec.name = std::string(word);
  }
  if (has_slots) {
    spec.slots = slot_count(slots_text);
    if (!spec.slots) {
      return LineError{bad_slots(slots_text)};
    }
  }
  return spec;
}

std::optional<LineError> apply_token(const std::string& token, HostSpec& spec) {
  const auto eq = token.find('=');
  if (eq == std::string::npos) {
    return LineError{fmt::format("unexpected '{}'; expected KEY=VALUE such as slots=4", token)};
  }
  const std::string key = token.substr(0, eq);
  const std::string value = token.substr(eq + 1);
  if (is_one_of(key, k_slot_keys)) {
    if (spec.slots) {
      return LineError{"slots given twice"};
    }
    spec.slots = slot_count(value);
    return spec.slots ? std::nullopt : std::optional(LineError{bad_slots(value)});
  }
  if (is_one_of(key, k_max_slot_keys)) {
    return slot_count(value) ? std::nullopt : std::optional(LineError{bad_slots(value)});
  }
  // Any other KEY=VALUE is a label ("rack=r1"), unless it looks like a
  // misspelt slot key: that stays an error, not a silent label.
  std::string hint = did_you_mean(key, {"slots", "max_slots"});
  if (!hint.empty()) {
    return LineError{fmt::format("unknown key '{}'; did you mean '{}'?", key, hint)};
  }
  if (auto why = add_label(token, spec.labels)) {
    return LineError{*why};
  }
  return std::nullopt;
}

std::variant<HostSpec, LineError> parse_line(std::string_view line) {
  const auto words = words_of(line);
  auto first = parse_host_word(words.front());
  if (std::holds_alternative<LineError>(first)) {
    return first;
  }
  auto spec = std::get<HostSpec>(std::move(first));
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (auto problem = apply_token(words[i], spec)) {
      return *problem;
    }
  }
  if (auto why = host_name_problem(spec.name)) {
    return LineError{fmt::format("bad host name {}: {}", quote_input(spec.name), *why)};
  }
  return spec;
}

} // namespace

Result<std::vector<HostSpec>> parse_hostfile(std::string_view text, const std::string& origin) {
  // Enough to fix a file by; a million bad lines must not become a million-line message.
  constexpr std::size_t k_max_reported = 20;
  std::vector<HostSpec> hosts;
  std::unordered_map<std::string, std::size_t> first_line;
  std::string errors;
  std::size_t problems = 0;
  auto report = [&](std::size_t line, const std::string& message) {
    if (++problems <= k_max_reported) {
      errors += fmt::format("{}:{}: {}\n", origin, line, message);
    }
  };
  const auto lines = split(text, '\n');
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) {
      continue;
    }
    auto parsed = parse_line(line);
    if (auto* problem = std::get_if<LineError>(&parsed)) {
      report(n + 1, problem->message);
      continue;
    }
    auto& spec = std::get<HostSpec>(parsed);
    auto [known, added] = first_line.emplace(spec.name, n + 1);
    if (!added) {
      report(n + 1, fmt::format("host '{}' is listed twice (first on line {})", spec.name, known->second));
      continue;
    }
    if (hosts.size() == k_max_hosts) {
      return fail(ExitCode::usage, fmt::format("{}:{}: more than {} hosts", origin, n + 1, k_max_hosts));
    }
    hosts.push_back(std::move(spec));
  }
  if (problems > k_max_reported) {
    errors += fmt::format("{}: {} more problems not shown\n", origin, problems - k_max_reported);
  }
  if (!errors.empty()) {
    errors.pop_back();
    return fail(ExitCode::usage, errors);
  }
  if (hosts.empty()) {
    return fail(ExitCode::usage, fmt::format("{}: no hosts in the hostfile", origin));
  }
  return hosts;
}

} // namespace ddl
