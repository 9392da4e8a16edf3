// SPDX-License-Identifier: MIT
// Every JSON document ddl writes goes through to_json_text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ddl {

// A JSON value whose objects keep their keys in insertion order.
using Json = nlohmann::ordered_json;

enum class JsonStyle {
  compact, // {"a":1,"b":[1,2]}
  spaced,  // {"a": 1, "b": [1, 2]}
};

// `doc` as one line of JSON, without a trailing newline. Always valid UTF-8:
// each invalid byte in a string becomes U+FFFD. Floating-point numbers take
// their shortest round-trip form (std::to_chars: 1.5, 100, 1e-05), non-finite
// ones become null.
std::string to_json_text(const Json& doc, JsonStyle style = JsonStyle::compact);

// Now as ISO 8601 UTC with milliseconds ("2026-01-02T03:04:05.678Z"), the
// "time" of JSON events and journal records.
std::string event_time_now();

} // namespace ddl
