// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ddl {

// The one table of signal names (this system's, sigabbrev_np): every name
// ddl reads or writes, in job files, `ddl signal`, messages, the shim's
// control lines, ssh's exit-signal and scancel, goes through these.

// "USR1" or "SIGUSR1" (upper case) -> its number; nullopt when unknown.
std::optional<int> signal_number(std::string_view name);

// A signal named as users write it: "SIGUSR1" or "USR1" (upper case), for
// the job file's stop_signal, checkpoint_signal and watchdog dump; nullopt
// for a name this system does not know (and for SIGKILL/SIGSTOP, which a
// program cannot answer).
std::optional<int> parse_catchable_signal(std::string_view name);

// "SIGUSR1" for 10; "signal N" when unknown.
std::string signal_name(int signo);

// "USR1" for 10, as `kill -s` and scancel --signal take it; "" when unknown.
std::string_view signal_abbrev(int signo);

} // namespace ddl
