// SPDX-License-Identifier: MIT
#pragma once

// The version of the live-job socket's protocol (live_server.hpp has the
// requests and answers; live_client.hpp asks). A running job's ddl may be
// another release than the `ddl ps/logs/stop/signal` that asks it (ddl was
// upgraded while the job ran), so every request line names its version:
//
//   ddl-live VERSION REQUEST     e.g. "ddl-live 1 logs 0 1"
//
// A server that speaks another version (or a client without one) answers
// "X ..." naming both versions, never a garbled answer. doc/protocols.md.

#include <string>
#include <string_view>

#include "src/util/error.hpp"

namespace ddl::live_protocol {

// Raised whenever a request or an answer changes.
inline constexpr int k_version = 1;

// "ddl-live 1 REQUEST\n": what a client sends.
std::string request_line(std::string_view request);

// The request that `line` (without its '\n') asks; where it speaks another
// version, the refusal that the server answers (after "X "), naming both.
Result<std::string> read_request(std::string_view line);

// What a client says of the server's "X TEXT" answer: TEXT, but where the
// server speaks no version (a ddl from before them, which took the versioned
// line for an unknown request), words naming both.
std::string refusal(std::string_view text);

} // namespace ddl::live_protocol
