// SPDX-License-Identifier: MIT
#include "src/util/stdin_source.hpp"

#include <sys/stat.h>

namespace ddl {

bool stdin_holds_nothing() {
  struct stat in {};
  if (::fstat(0, &in) != 0) {
    return true;
  }
  struct stat null {};
  return S_ISCHR(in.st_mode) && ::stat("/dev/null", &null) == 0 && in.st_rdev == null.st_rdev;
}

} // namespace ddl
