// SPDX-License-Identifier: MIT
#include "src/util/table.hpp"

#include <algorithm>

#include "src/util/text.hpp"

namespace ddl {

namespace {

std::vector<std::size_t> column_widths(const std::vector<TableRow>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  return widths;
}

} // namespace

std::string align_columns(const std::vector<TableRow>& given) {
  std::vector<TableRow> rows = given;
  for (auto& row : rows) {
    for (auto& cell : row) {
      cell = escape_control(cell);
    }
  }
  const auto widths = column_widths(rows);
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) {
        out.append(widths[i] - row[i].size() + 2, ' ');
      }
    }
    out += '\n';
  }
  return out;
}

} // namespace ddl
