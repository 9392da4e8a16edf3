// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"

namespace ddl {

// A host spec as written in a list or -H: "name", "name:slots", "[v6]:slots",
// with the login that pdsh and ssh users write: "user@name",
// "name:port:slots", "user@[v6]:port:slots".
struct HostSpec {
  std::string name;
  std::optional<int> slots;
  std::string user;         // "" = [ssh] user or the ssh config's
  std::optional<int> port;  // empty = [ssh] port or the ssh config's
};

// Expands Slurm-style hostlists: "node[01-04,07]", "gpu[1-2]-ib",
// "r[1-2]n[1-2]", "a,b" (commas outside brackets separate hosts),
// with an optional ":slots" per item and bracketed IPv6 "[fe80::1]:2".
// An item may start with "user@", and hold a port before its slots
// ("gpu-a:2222:8": a single number after ':' is always the slots).
Result<std::vector<HostSpec>> expand_hostlist(std::string_view text);

} // namespace ddl
