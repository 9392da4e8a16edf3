// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "src/util/exit_codes.hpp"

namespace ddl {

// An expected failure: a message for the user and the exit code it maps to.
// `message` may hold several lines (every job-file error at once); each line
// is printed as is, without a "ddl: error:" prefix being added per line.
struct Error {
  ExitCode code = ExitCode::usage;
  std::string message;
};

// The failure side of a Result, as std::unexpected is for std::expected.
struct Unexpected {
  Error error;
};

inline Unexpected fail(ExitCode code, std::string message) {
  return Unexpected{Error{code, std::move(message)}};
}
inline Unexpected fail(Error error) { return Unexpected{std::move(error)}; }

// A value or an Error: the subset of std::expected<T, Error> that ddl uses.
// In-house because clang 14 (the sanitizer and fuzzer build) cannot compile
// libstdc++'s <expected>. Use ddl::fail(...) to return an error.
template <typename T> class [[nodiscard]] Result {
public:
  using value_type = T;

  Result(const T& value) : m_state(std::in_place_index<0>, value) {}
  Result(T&& value) : m_state(std::in_place_index<0>, std::move(value)) {}
  template <typename U>
    requires(std::is_constructible_v<T, U &&> &&
             !std::is_same_v<std::remove_cvref_t<U>, Result> &&
             !std::is_same_v<std::remove_cvref_t<U>, Unexpected>)
  Result(U&& value) : m_state(std::in_place_index<0>, std::forward<U>(value)) {}
  Result(Unexpected failure) : m_state(std::in_place_index<1>, std::move(failure.error)) {}

  bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(m_state); }
  const T& value() const& { return std::get<0>(m_state); }
  T&& value() && { return std::get<0>(std::move(m_state)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::get<0>(std::move(m_state)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  template <typename U> T value_or(U&& fallback) const& {
    return has_value() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

  Error& error() & { return std::get<1>(m_state); }
  const Error& error() const& { return std::get<1>(m_state); }
  Error&& error() && { return std::get<1>(std::move(m_state)); }

private:
  std::variant<T, Error> m_state;
};

template <> class [[nodiscard]] Result<void> {
public:
  using value_type = void;

  Result() = default;
  Result(Unexpected failure) : m_error(std::move(failure.error)) {}

  bool has_value() const { return !m_error.has_value(); }
  explicit operator bool() const { return has_value(); }
  void value() const {}
  void operator*() const {}

  Error& error() & { return *m_error; }
  const Error& error() const& { return *m_error; }
  Error&& error() && { return std::move(*m_error); }

private:
  std::optional<Error> m_error;
};

} // namespace ddl
