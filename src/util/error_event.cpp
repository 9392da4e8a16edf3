// SPDX-License-Identifier: MIT
#include "src/util/error_event.hpp"

#include <string>

#include "src/util/text.hpp"

namespace ddl {

namespace {

// The digits of `line` from `at` up to the first non-digit: where they end,
// or npos when there are none.
std::size_t digits_end(const std::string& line, std::size_t at) {
  std::size_t end = at;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') {
    ++end;
  }
  return end > at && end - at <= 9 ? end : std::string::npos;
}

// One line of an error: "FILE:LINE:COL: message" (a job-file error) split
// into its parts at the first ":LINE:COL: ", else {"message"}. One pass, no
// regex: a line may be megabytes long.
Json error_line(const std::string& line) {
  for (std::size_t colon = line.find(':', 1); colon != std::string::npos; colon = line.find(':', colon + 1)) {
    std::size_t row_end = digits_end(line, colon + 1);
    if (row_end == std::string::npos || line[row_end] != ':') {
      continue;
    }
    std::size_t col_end = digits_end(line, row_end + 1);
    if (col_end == std::string::npos || line.compare(col_end, 2, ": ") != 0) {
      continue;
    }
    return {{"file", line.substr(0, colon)},
            {"line", std::stoi(line.substr(colon + 1, row_end - colon - 1))},
            {"column", std::stoi(line.substr(row_end + 1, col_end - row_end - 1))},
            {"message", line.substr(col_end + 2)}};
  }
  return {{"message", line}};
}

} // namespace

Json error_event(const Error& error) {
  Json errors = Json::array();
  for (const std::string& line : split(error.message, '\n')) {
    if (!line.empty()) {
      errors.push_back(error_line(line));
    }
  }
  return {{"event", "error"}, {"time", event_time_now()}, {"exit_code", to_int(error.code)},
          {"message", error.message}, {"errors", std::move(errors)}};
}

} // namespace ddl
