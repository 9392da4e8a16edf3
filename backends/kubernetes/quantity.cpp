// SPDX-License-Identifier: MIT
#include <array>
#include <optional>
#include <cctype>
#include <utility>

#include <fmt/core.h>

#include "backends/kubernetes/pods.hpp"
#include "src/util/text.hpp"

namespace ddl::kubernetes {

namespace {

constexpr long long k_max_quantity = 1'000'000'000'000LL;

struct Suffix {
  std::string_view text;
  int base;      // 2 or 10
  int exponent;  // power of base
};

// Longest first so that "Ki" wins over a stray "K".
constexpr std::array<Suffix, 15> k_suffixes{{
    {"Ki", 2, 10}, {"Mi", 2, 20}, {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3}, {"M", 10, 6}, {"G", 10, 9},
    {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18},
}};

Error bad(std::string_view text, std::string_view why) {
  return Error{ExitCode::launch, fmt::format("quantity '{}' {}", text, why)};
}

// digits[.digits] -> (integer mantissa, count of fraction digits).
std::optional<std::pair<long long, int>> parse_decimal(std::string_view number) {
  long long mantissa = 0;
  int fraction_digits = 0;
  bool seen_dot = false;
  bool seen_digit = false;
  for (char c : number) {
    if (c == '.' && !seen_dot) {
      seen_dot = true;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
      return std::nullopt;
    }
    seen_digit = true;
    if (mantissa > k_max_quantity) {
      return std::nullopt;
    }
    mantissa = mantissa * 10 + (c - '0');
    fraction_digits += seen_dot ? 1 : 0;
  }
  if (!seen_digit) {
    return std::nullopt;
  }
  return std::pair{mantissa, fraction_digits};
}

} // namespace

Result<long long> parse_whole_quantity(std::string_view text) {
  std::string_view number = text;
  if (!number.empty() && number.front() == '+') {
    number.remove_prefix(1);
  }
  int base = 10;
  int exponent = 0;
  bool has_suffix = false;
  for (const auto& suffix : k_suffixes) {
    if (number.ends_with(suffix.text)) {
      base = suffix.base;
      exponent = suffix.exponent;
      number.remove_suffix(suffix.text.size());
      has_suffix = true;
      break;
    }
  }
  // Decimal exponent form: "1e3", "2E2".
  if (auto e = number.find_first_of("eE"); !has_suffix && e != std::string_view::npos) {
    auto exp_value = parse_int(number.substr(e + 1));
    if (!exp_value || *exp_value > 18) {
      return fail(bad(text, "is not a valid Kubernetes quantity"));
    }
    exponent = static_cast<int>(*exp_value);
    number = number.substr(0, e);
  }
  auto decimal = parse_decimal(number);
  if (!decimal) {
    return fail(bad(text, "is not a valid Kubernetes quantity"));
  }
  auto [mantissa, fraction_digits] = *decimal;
  // value = mantissa * base^exponent / 10^fraction_digits, exactly.
  __extension__ typedef __int128 Wide;
  Wide numerator = mantissa;
  Wide denominator = 1;
  int tens = (base == 10 ? exponent : 0) - fraction_digits;
  if (base == 2) {
    numerator <<= exponent;
  }
  for (; tens > 0; --tens) {
    numerator *= 10;
    if (numerator > k_max_quantity) {
      return fail(bad(text, "is too large"));
    }
  }
  for (; tens < 0; ++tens) {
    denominator *= 10;
  }
  if (numerator % denominator != 0) {
    return fail(bad(text, "is not a whole number"));
  }
  Wide value = numerator / denominator;
  if (value > k_max_quantity) {
    return fail(bad(text, "is too large"));
  }
  return static_cast<long long>(value);
}

} // namespace ddl::kubernetes
