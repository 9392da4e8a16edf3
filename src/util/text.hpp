// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest of `candidates` to `word` when it is a plausible typo, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// Splits on `sep`, keeping empty fields.
std::vector<std::string> split(std::string_view text, char sep);

std::string_view trim(std::string_view text);

// The last `count` lines of `text`, trimmed (a helper's last words for an
// error message).
std::string last_lines(std::string_view text, std::size_t count);

// Parses a whole decimal int (no sign, no junk); nullopt when not one.
std::optional<long long> parse_int(std::string_view text);

// Quotes one word for POSIX sh ('...' with ' as '\'').
std::string shell_quote(std::string_view word);

// `text` with every invalid UTF-8 byte replaced by U+FFFD (JSON needs UTF-8).
std::string valid_utf8(std::string_view text);

} // namespace ddl
