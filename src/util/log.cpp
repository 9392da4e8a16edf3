// SPDX-License-Identifier: MIT
#include "src/util/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/core.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace ddl {

namespace {
void print_tagged(std::string_view tag, std::string_view color, std::string_view message) {
  if (use_color()) {
    fmt::print(stderr, "ddl: \x1b[{}m{}:\x1b[0m {}\n", color, tag, message);
  } else {
    fmt::print(stderr, "ddl: {}: {}\n", tag, message);
  }
  std::fflush(stderr);
}
} // namespace

bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  return (no_color == nullptr || *no_color == '\0') && isatty(STDERR_FILENO) != 0;
}

void set_log_level(int verbose, bool quiet) {
  auto logger = std::make_shared<spdlog::logger>("ddl", std::make_shared<spdlog::sinks::stderr_sink_st>());
  logger->set_pattern("ddl: %l: %v");
  spdlog::set_default_logger(logger);
  auto level = spdlog::level::warn;
  if (quiet) {
    level = spdlog::level::err;
  } else if (verbose >= 2) {
    level = spdlog::level::debug;
  } else if (verbose == 1) {
    level = spdlog::level::info;
  }
  if (const char* env = std::getenv("DDL_LOG"); env != nullptr && *env != '\0') {
    level = spdlog::level::from_str(env);
  }
  spdlog::set_level(level);
}

void print_error(std::string_view message) { print_tagged("error", "1;31", message); }
void print_warning(std::string_view message) { print_tagged("warning", "1;35", message); }

} // namespace ddl
