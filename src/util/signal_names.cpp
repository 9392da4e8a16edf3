// SPDX-License-Identifier: MIT
#include "src/util/signal_names.hpp"

#include <csignal>
#include <cstring>

#include <fmt/core.h>

namespace ddl {

std::optional<int> parse_catchable_signal(std::string_view name) {
  if (name.starts_with("SIG")) {
    name.remove_prefix(3);
  }
  if (name.empty()) {
    return std::nullopt;
  }
  for (int signo = 1; signo < NSIG; ++signo) {
    const char* abbrev = ::sigabbrev_np(signo);
    if (abbrev != nullptr && name == abbrev) {
      if (signo == SIGKILL || signo == SIGSTOP) {
        return std::nullopt;
      }
      return signo;
    }
  }
  return std::nullopt;
}

std::string signal_text(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signo);
}

} // namespace ddl
