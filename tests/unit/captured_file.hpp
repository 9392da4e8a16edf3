// SPDX-License-Identifier: MIT
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <stdlib.h>
#include <unistd.h>

namespace ddl::test {

// A temporary file that the supervisor writes its stdout or stderr to.
struct CapturedFile {
  std::string path;
  int fd = -1;
  CapturedFile() {
    std::string pattern = "/tmp/ddl-unit-XXXXXX";
    fd = ::mkstemp(pattern.data());
    path = pattern;
  }
  ~CapturedFile() {
    ::close(fd);
    ::unlink(path.c_str());
  }
  CapturedFile(const CapturedFile&) = delete;
  CapturedFile& operator=(const CapturedFile&) = delete;
  std::string text() const {
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }
};

} // namespace ddl::test
