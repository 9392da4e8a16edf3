// SPDX-License-Identifier: MIT
// A scan for nesting before the TOML parser sees the text: the parser recurses
// once per level of dotted keys, table headers, arrays and inline tables, so a
// file nested tens of thousands of levels deep would overflow the stack.
#include <optional>
#include <string_view>

#include "src/job/job_reader.hpp"

namespace ddl::job_detail {

namespace {

// Where the scan is in the text; strings and comments are skipped whole.
struct NestingScan {
  std::string_view text;
  std::size_t at = 0;
  Position where{1, 1};
  int brackets = 0;   // open [ and { outside strings
  int dots = 0;       // dotted-key parts since the last '=', ',', bracket or line

  bool starts_with(std::string_view token) const { return text.substr(at).starts_with(token); }
  void advance(std::size_t count) {
    for (; count > 0 && at < text.size(); --count, ++at) {
      if (text[at] == '\n') {
        ++where.line;
        where.column = 1;
      } else {
        ++where.column;
      }
    }
  }
  // Skips past `close`, or to the end of the text when it never comes.
  void skip_past(std::string_view close, bool escapes) {
    while (at < text.size() && !starts_with(close)) {
      advance(escapes && text[at] == '\\' ? 2 : 1);
    }
    advance(close.size());
  }
  void skip_to_line_end() {
    while (at < text.size() && text[at] != '\n') {
      advance(1);
    }
  }
};

} // namespace

std::optional<Position> too_deeply_nested(std::string_view text, int max_depth) {
  NestingScan scan{text};
  while (scan.at < text.size()) {
    const char c = text[scan.at];
    if (scan.starts_with("\"\"\"") || scan.starts_with("'''")) {
      std::string_view quote = text.substr(scan.at, 3);
      scan.advance(3);
      scan.skip_past(quote, quote[0] == '"');
      continue;
    }
    if (c == '"' || c == '\'') {
      scan.advance(1);
      scan.skip_past(std::string_view(&c, 1), c == '"');
      continue;
    }
    if (c == '#') {
      scan.skip_to_line_end();
      continue;
    }
    if (c == '[' || c == '{') {
      ++scan.brackets;
      scan.dots = 0;
    } else if (c == ']' || c == '}') {
      scan.brackets = scan.brackets > 0 ? scan.brackets - 1 : 0;
    } else if (c == '.') {
      ++scan.dots;
    } else if (c == '=' || c == ',' || c == '\n') {
      scan.dots = 0;
    }
    if (scan.brackets + scan.dots > max_depth) {
      return scan.where;
    }
    scan.advance(1);
  }
  return std::nullopt;
}

} // namespace ddl::job_detail
