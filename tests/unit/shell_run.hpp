// SPDX-License-Identifier: MIT
#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include <sys/wait.h>

namespace ddl::test {

// Runs `command` with /bin/sh (popen): its exit code (-1 when killed) and
// what it wrote to stdout.
inline std::pair<int, std::string> run_shell(const std::string& command) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return {-1, ""};
  }
  std::string said;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    said += buffer;
  }
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, said};
}

} // namespace ddl::test
