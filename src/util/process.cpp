// SPDX-License-Identifier: MIT
#include "src/util/process.hpp"

#include <filesystem>
#include <system_error>

namespace ddl {

std::string own_executable_path() {
  std::error_code failed;
  auto path = std::filesystem::read_symlink("/proc/self/exe", failed);
  return failed ? std::string("ddl") : path.string();
}

} // namespace ddl
