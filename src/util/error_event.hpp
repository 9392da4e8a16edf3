// SPDX-License-Identifier: MIT
// An error as a JSON event, for --json: what ddl prints on stdout beside
// "ddl: error: ..." on stderr.
#pragma once

#include "src/util/error.hpp"
#include "src/util/json.hpp"

namespace ddl {

// {"event": "error", "time", "exit_code", "message", "errors": [..]}: the
// whole message, and each of its lines (one per problem) on its own.
// A line "FILE:LINE:COL: message" (a job-file error) is given its parts.
Json error_event(const Error& error);

} // namespace ddl
