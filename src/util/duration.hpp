// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ddl {

using Millis = std::chrono::milliseconds;

// "500ms", "30s", "5m", "2h", "1h30m" -> milliseconds; nullopt when invalid.
std::optional<Millis> parse_duration(std::string_view text);
// Formats milliseconds the way a user writes them ("1.5s", "2h"): the one
// formatter for every duration ddl prints.
std::string format_duration(Millis value);

} // namespace ddl
