// SPDX-License-Identifier: MIT
#include "src/util/signal_names.hpp"

#include <csignal>
#include <cstring>

#include <fmt/core.h>

namespace ddl {

std::optional<int> signal_number(std::string_view name) {
  if (name.starts_with("SIG")) {
    name.remove_prefix(3);
  }
  if (name.empty()) {
    return std::nullopt;
  }
  for (int signo = 1; signo < NSIG; ++signo) {
    if (signal_abbrev(signo) == name) {
      return signo;
    }
  }
  return std::nullopt;
}

std::optional<int> parse_catchable_signal(std::string_view name) {
  auto signo = signal_number(name);
  if (signo == SIGKILL || signo == SIGSTOP) {
    return std::nullopt;
  }
  return signo;
}

std::string signal_name(int signo) {
  std::string_view abbrev = signal_abbrev(signo);
  return !abbrev.empty() ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signo);
}

std::string_view signal_abbrev(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  return abbrev != nullptr ? std::string_view(abbrev) : std::string_view();
}

} // namespace ddl
