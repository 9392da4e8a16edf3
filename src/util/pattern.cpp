// SPDX-License-Identifier: MIT
#include "src/util/pattern.hpp"

#include <re2/re2.h>

namespace ddl {

namespace {

// The compiled program and its matching caches together; RE2 falls back to
// a slower (still linear) engine past it, never to more memory.
constexpr int64_t k_max_memory = int64_t{4} << 20;

} // namespace

Result<Pattern> Pattern::compile(std::string_view text) {
  RE2::Options options;
  options.set_log_errors(false);  // the error is returned, never printed by RE2
  options.set_max_mem(k_max_memory);
  auto compiled = std::make_shared<const re2::RE2>(re2::StringPiece(text.data(), text.size()), options);
  if (!compiled->ok()) {
    return fail(ExitCode::usage, compiled->error());
  }
  return Pattern(std::move(compiled));
}

bool Pattern::found_in(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *compiled_);
}

std::optional<std::string_view> Pattern::match_in(std::string_view text) const {
  re2::StringPiece input(text.data(), text.size());
  re2::StringPiece found[2];
  const int groups = compiled_->NumberOfCapturingGroups() > 0 ? 2 : 1;
  if (!compiled_->Match(input, 0, input.size(), RE2::UNANCHORED, found, groups)) {
    return std::nullopt;
  }
  const re2::StringPiece& piece = found[groups - 1];
  return piece.data() == nullptr ? std::string_view() : std::string_view(piece.data(), piece.size());
}

} // namespace ddl
