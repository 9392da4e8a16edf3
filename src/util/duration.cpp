// SPDX-License-Identifier: MIT
// Durations as users write them: "500ms", "30s", "1h30m".
#include "src/util/duration.hpp"

#include <cstdint>
#include <string>

#include <fmt/core.h>

namespace ddl {

namespace {

// About 31,000 years: far beyond any sensible value, far below overflow.
constexpr std::int64_t k_max_duration_ms = 1'000'000'000'000'000;

std::optional<std::int64_t> unit_millis(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1'000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  return std::nullopt;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Reads digits at `pos` into `value` (at most `max_digits`); false when none.
bool read_digits(std::string_view text, std::size_t& pos, std::int64_t& value,
                 std::size_t& digits, std::size_t max_digits) {
  value = 0;
  digits = 0;
  while (pos < text.size() && is_digit(text[pos])) {
    if (++digits > max_digits) {
      return false;
    }
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  return digits > 0;
}

} // namespace

std::optional<Millis> parse_duration(std::string_view text) {
  if (text == "0") {
    return Millis{0};
  }
  std::size_t pos = 0;
  std::int64_t total = 0;
  if (text.empty()) {
    return std::nullopt;
  }
  while (pos < text.size()) {
    std::int64_t whole = 0;
    std::int64_t fraction = 0;
    std::size_t digits = 0;
    std::size_t fraction_digits = 0;
    if (!read_digits(text, pos, whole, digits, 15)) {
      return std::nullopt;
    }
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (!read_digits(text, pos, fraction, fraction_digits, 9)) {
        return std::nullopt;
      }
    }
    std::size_t unit_start = pos;
    while (pos < text.size() && is_alpha(text[pos])) {
      ++pos;
    }
    auto unit = unit_millis(text.substr(unit_start, pos - unit_start));
    if (!unit) {
      return std::nullopt;
    }
    std::int64_t scale = 1;
    for (std::size_t i = 0; i < fraction_digits; ++i) {
      scale *= 10;
    }
    // Fractions must come out as whole milliseconds ("1.5s" yes, "1.5ms" no).
    if ((fraction * *unit) % scale != 0 || whole > k_max_duration_ms / *unit) {
      return std::nullopt;
    }
    total += whole * *unit + fraction * *unit / scale;
    if (total > k_max_duration_ms) {
      return std::nullopt;
    }
  }
  return Millis{total};
}

std::string format_duration(Millis value) {
  std::int64_t ms = value.count();
  if (ms < 0) {
    return fmt::format("-{}", format_duration(Millis{-ms}));
  }
  if (ms == 0) {
    return "0s";
  }
  if (ms < 1'000) {
    return fmt::format("{}ms", ms);
  }
  std::string out;
  if (ms >= 3'600'000) {
    out += fmt::format("{}h", ms / 3'600'000);
    ms %= 3'600'000;
  }
  if (ms >= 60'000) {
    out += fmt::format("{}m", ms / 60'000);
    ms %= 60'000;
  }
  if (ms > 0) {
    std::string seconds = fmt::format("{}.{:03}", ms / 1'000, ms % 1'000);
    while (seconds.back() == '0') {
      seconds.pop_back();
    }
    if (seconds.back() == '.') {
      seconds.pop_back();
    }
    out += seconds + "s";
  }
  return out;
}

} // namespace ddl
