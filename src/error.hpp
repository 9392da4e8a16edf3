// SPDX-License-Identifier: MIT
#pragma once

#include <expected>
#include <string>
#include <utility>

#include "src/exit_codes.hpp"

namespace ddl {

// An expected failure: a message for the user and the exit code it maps to.
// `message` may hold several lines (every job-file error at once); each line
// is printed as is, without a "ddl: error:" prefix being added per line.
struct Error {
  ExitCode code = ExitCode::usage;
  std::string message;
};

template <typename T> using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(ExitCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

} // namespace ddl
