// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ddl {

// A signal named as users write it: "SIGUSR1" or "USR1" (upper case), for
// the job file's stop_signal, checkpoint_signal and watchdog dump; nullopt
// for a name this system does not know (and for SIGKILL/SIGSTOP, which a
// program cannot answer).
std::optional<int> parse_catchable_signal(std::string_view name);

// "SIGUSR1" for 10; "signal N" when unknown.
std::string signal_text(int signo);

} // namespace ddl
