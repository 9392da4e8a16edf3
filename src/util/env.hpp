// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddl {

// Ordered name=value pairs; order is kept so that output is reproducible.
using EnvList = std::vector<std::pair<std::string, std::string>>;

// A portable environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_env_name(std::string_view name);

// NAME's value in ENV (its last, where ENV sets it twice), "" when unset.
std::string env_value(const EnvList& env, std::string_view name);

} // namespace ddl
