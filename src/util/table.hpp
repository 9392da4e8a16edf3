// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace ddl {

using TableRow = std::vector<std::string>;

// `rows` as left-aligned columns two spaces apart, one line each: every cell
// but a row's last is padded to the widest cell of its column (in bytes).
// Control bytes in a cell are escaped (escape_control): a row stays one line.
std::string align_columns(const std::vector<TableRow>& rows);

} // namespace ddl
