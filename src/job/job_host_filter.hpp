// SPDX-License-Identifier: MIT
#pragma once

// DeepSpeed's host and slot filters, --include and --exclude:
// "worker-0:0,1@worker-1" names worker-0's slots 0 and 1, and all of worker-1.

#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"

namespace ddl {

struct HostSlots {
  std::string host;
  std::vector<int> slots;  // empty: the whole host
};

// Parses a filter: hosts separated by '@', each "NAME" or "NAME:S,S,..."
// (NAME may be a range, "node[1-4]"). Errors are one line, ExitCode::usage.
Result<std::vector<HostSlots>> parse_host_filter(std::string_view text);

} // namespace ddl
