// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

namespace ddl {

// -v: info, -vv: debug, -q: errors only; DDL_LOG=debug|info|warn|error wins.
// Diagnostics go to stderr as "ddl: LEVEL: message".
void set_log_level(int verbose, bool quiet);

// "ddl: error: " before the first line; later lines as they are.
// Coloured only on a terminal and never with NO_COLOR set.
void print_error(std::string_view message);
void print_warning(std::string_view message);

// True when stderr is a terminal and NO_COLOR is unset.
bool use_color();

} // namespace ddl
