// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace ddl {

// This executable's absolute path (/proc/self/exe), or "ddl" when unknown:
// what ddl starts again as a worker, shim or rsh agent.
std::string own_executable_path();

} // namespace ddl
