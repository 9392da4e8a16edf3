// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"

namespace ddl {

// The templates `ddl init --template` accepts, the default first.
const std::vector<std::string>& init_template_names();

// Writes the commented starter job file `name` (templates/NAME.toml, built
// into the binary) to `path`; the kubernetes template also writes its worker
// manifest next to it, as PATH-without-extension.yaml. Refuses to overwrite
// any existing file unless `force` (ExitCode::usage), and then writes none.
// Returns the paths written.
Result<std::vector<std::string>> write_init_template(std::string_view name, const std::string& path,
                                                     bool force);

} // namespace ddl
