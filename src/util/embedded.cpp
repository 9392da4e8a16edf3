// SPDX-License-Identifier: MIT
#include "src/util/embedded.hpp"

namespace ddl {

std::optional<std::string_view> embedded_file(std::string_view name) {
  for (const EmbeddedFile& file : embedded_files()) {
    if (file.name == name) {
      return file.data;
    }
  }
  return std::nullopt;
}

} // namespace ddl
