// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace ddl {

// A file of the source tree compiled into the binary (cmake/Embed.cmake):
// the completion scripts and the `ddl init` templates.
struct EmbeddedFile {
  std::string_view name;  // path under the source root, e.g. "completions/_ddl"
  std::string_view data;
};

// Every embedded file, in a fixed order.
std::span<const EmbeddedFile> embedded_files();

// The contents of the embedded file `name`, if there is one.
std::optional<std::string_view> embedded_file(std::string_view name);

} // namespace ddl
