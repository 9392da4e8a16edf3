// SPDX-License-Identifier: MIT
#pragma once

// A user's regular expression ([watchdog] progress), matched by RE2: in time
// linear in the text, whatever the pattern, so that no rank line can keep
// the thread that matches it busy. RE2 stays in this file's source.

#include <memory>
#include <optional>
#include <string_view>

#include "src/util/error.hpp"

namespace re2 {
class RE2;
}

namespace ddl {

class Pattern {
public:
  // `text` compiled (RE2 syntax: Perl's, without back references or
  // look-around). The error (ExitCode::usage) is RE2's reason, e.g.
  // "invalid escape sequence: \1".
  static Result<Pattern> compile(std::string_view text);
  // Whether the pattern matches anywhere in `text`.
  bool found_in(std::string_view text) const;
  // The text of the first match's first group (the whole match when the
  // pattern has no group); nullopt when it does not match.
  std::optional<std::string_view> match_in(std::string_view text) const;

private:
  explicit Pattern(std::shared_ptr<const re2::RE2> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const re2::RE2> compiled_;
};

} // namespace ddl
