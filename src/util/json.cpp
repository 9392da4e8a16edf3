// SPDX-License-Identifier: MIT
#include "src/util/json.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string_view>

#include <fmt/core.h>

namespace ddl {

namespace {

struct Separators {
  std::string_view item;
  std::string_view key;
};

// Strings, integers, booleans and null as nlohmann writes them.
std::string scalar_text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// to_chars rather than nlohmann's "100.0": the bench JSON has always printed
// the shortest form, and fmt's "{}" printed wrong digits in a clang build.
std::string float_text(double value) {
  if (!std::isfinite(value)) {
    return "null";
  }
  std::array<char, 64> buffer{};
  auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return {buffer.data(), result.ptr};
}

void append_value(std::string& out, const Json& value, const Separators& separators);

void append_object(std::string& out, const Json& object, const Separators& separators) {
  out += '{';
  bool first = true;
  for (const auto& [key, member] : object.items()) {
    if (!first) {
      out += separators.item;
    }
    first = false;
    out += scalar_text(Json(key));
    out += separators.key;
    append_value(out, member, separators);
  }
  out += '}';
}

void append_array(std::string& out, const Json& array, const Separators& separators) {
  out += '[';
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (i > 0) {
      out += separators.item;
    }
    append_value(out, array[i], separators);
  }
  out += ']';
}

void append_value(std::string& out, const Json& value, const Separators& separators) {
  if (value.is_object()) {
    append_object(out, value, separators);
  } else if (value.is_array()) {
    append_array(out, value, separators);
  } else if (value.is_number_float()) {
    out += float_text(value.get<double>());
  } else {
    out += scalar_text(value);
  }
}

} // namespace

std::string to_json_text(const Json& doc, JsonStyle style) {
  const Separators separators = style == JsonStyle::compact ? Separators{",", ":"} : Separators{", ", ": "};
  std::string out;
  append_value(out, doc, separators);
  return out;
}

std::string event_time_now() {
  auto now = std::chrono::system_clock::now();
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", text.data(), millis % 1000);
}

} // namespace ddl
