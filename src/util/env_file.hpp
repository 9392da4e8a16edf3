// SPDX-License-Identifier: MIT
#pragma once

// Env files: DeepSpeed's .deepspeed_env, and [job] env_file / --env-file.
//
//   # a comment (a line whose first non-blank is '#')
//   NCCL_DEBUG=INFO
//   export PYTHONPATH=/opt/lib          (a leading "export " is allowed)
//   GREETING="hello world"              (double quotes: \" \\ \$ \n \t escapes)
//   PATTERN='a*b $x'                    (single quotes: every byte as written)
//   EMPTY=
//
// An unquoted value is taken as written, without the blanks around it (a '#'
// in it is part of it). Every error names ORIGIN:LINE.

#include <string>
#include <string_view>

#include "src/util/env.hpp"
#include "src/util/error.hpp"

namespace ddl {

// The assignments of `text`, in order (a name given again keeps its first
// place and takes the later value). ExitCode::usage errors, "ORIGIN:LINE: why".
Result<EnvList> parse_env_file(std::string_view text, const std::string& origin);

// The file at `path` (size-capped) parsed as above.
Result<EnvList> read_env_file(const std::string& path);

} // namespace ddl
