// SPDX-License-Identifier: MIT
#include "src/util/rank_tag.hpp"

#include <charconv>

#include <fmt/core.h>

namespace ddl::rank_tag {

namespace {
constexpr std::string_view k_verdict = "ddl: error: ";
constexpr std::string_view k_rank_word = "rank ";

// The number at the start of `text` and where it ends; nullopt without digits.
std::optional<std::pair<int, std::size_t>> leading_number(std::string_view text) {
  int value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) {
    return std::nullopt;
  }
  return std::pair{value, static_cast<std::size_t>(end - text.data())};
}
} // namespace

Result<void> check_version(int asked) {
  if (asked == k_version) {
    return {};
  }
  return fail(ExitCode::launch, fmt::format("ddl reads the lines of `ddl worker pmix-host` of version {}, this worker "
                                            "writes version {} (the host's ddl is another release: install the same "
                                            "ddl on every host)",
                                            asked, k_version));
}

std::string tag(int rank) { return fmt::format("[{}] ", rank); }

std::string continued(int rank) { return fmt::format("[{}+] ", rank); }

std::optional<Tag> parse(std::string_view line) {
  if (!line.starts_with('[')) {
    return std::nullopt;
  }
  auto number = leading_number(line.substr(1));
  if (!number) {
    return std::nullopt;
  }
  Tag found{number->first, 1 + number->second, false};
  found.continues = line.substr(found.text_at, 1) == "+";
  found.text_at += found.continues ? 1 : 0;
  if (line.substr(found.text_at, 2) != "] ") {
    return std::nullopt;
  }
  found.text_at += 2;
  return found;
}

std::string verdict_line(std::string_view reason) { return fmt::format("{}{}", k_verdict, reason); }

std::optional<int> blamed_rank(std::string_view line) {
  if (!line.starts_with(k_verdict) || !line.substr(k_verdict.size()).starts_with(k_rank_word)) {
    return std::nullopt;
  }
  std::string_view rest = line.substr(k_verdict.size() + k_rank_word.size());
  auto number = leading_number(rest);
  if (!number || rest.substr(number->second, 1) != " ") {
    return std::nullopt;
  }
  return number->first;
}

} // namespace ddl::rank_tag
