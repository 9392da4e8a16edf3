// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

// Edit distance (a swap of two neighbours counts one), for "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest of `candidates` to `word` when it is a plausible typo (at most
// one edit per three letters, leading dashes aside), else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// Splits on `sep`, keeping empty fields.
std::vector<std::string> split(std::string_view text, char sep);

// TEXT with every FROM replaced by TO, left to right, never rescanning TO.
std::string replace_all(std::string text, std::string_view from, std::string_view to);

std::string_view trim(std::string_view text);
// ASCII letters made lower case (host names compare this way).
std::string to_lower(std::string_view text);

// The last `count` lines of `text`, trimmed, each cut as clip() cuts (a
// helper's last words for an error message).
std::string last_lines(std::string_view text, std::size_t count);

// At most this much of one piece of input goes into a message.
inline constexpr std::size_t k_quote_max_bytes = 200;

// `text` cut to its first `max` bytes (never inside a UTF-8 character) with
// "…" and its whole length: "aaa… (100002 bytes)"; whole when it fits.
std::string clip(std::string_view text, std::size_t max = k_quote_max_bytes);

// A piece of input in a message: 'text' with control bytes as \xNN, cut as
// clip() cuts: 'aaa…' (100002 bytes).
std::string quote_input(std::string_view text, std::size_t max = k_quote_max_bytes);

// `text` with each control byte (below 0x20, and 0x7f) written as \n, \t,
// \r, \e or \xNN: for ddl's own lines (tables, --dry-run), which a value
// must never break or use to drive the terminal.
std::string escape_control(std::string_view text);

// Parses a whole decimal int (no sign, no junk); nullopt when not one.
std::optional<long long> parse_int(std::string_view text);

// Quotes one word for POSIX sh ('...' with ' as '\'').
std::string shell_quote(std::string_view word);

// One word as a shell reads it back, on one line: bare when it needs no
// quotes, '...' when it holds no control byte, else $'...' with escapes
// (bash, zsh, ksh and POSIX.1-2024 sh read it).
std::string shell_word(std::string_view word);

// `text` with every invalid UTF-8 byte replaced by U+FFFD (JSON needs UTF-8).
std::string valid_utf8(std::string_view text);

} // namespace ddl
