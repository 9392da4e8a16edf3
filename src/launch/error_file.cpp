// SPDX-License-Identifier: MIT
#include "src/launch/error_file.hpp"

#include <vector>

#include "src/util/json.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

std::string string_at(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

std::optional<RankError> parse_torch_error_file(std::string_view text) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("message")) {
    return std::nullopt;
  }
  const Json& message = doc["message"];
  RankError error;
  if (message.is_string()) {
    error.message = message.get<std::string>();
  } else if (message.is_object()) {
    error.message = string_at(message, "message");
    if (auto extra = message.find("extraInfo"); extra != message.end() && extra->is_object()) {
      error.traceback = bounded_traceback(string_at(*extra, "py_callstack"));
      error.timestamp = string_at(*extra, "timestamp");
    }
  }
  if (error.message.empty() && error.traceback.empty()) {
    return std::nullopt;
  }
  return error;
}

std::string bounded_traceback(std::string_view traceback) {
  while (!traceback.empty() && traceback.back() == '\n') {
    traceback.remove_suffix(1);
  }
  std::vector<std::string> lines = split(traceback, '\n');
  std::size_t first = lines.size() > k_traceback_max_lines ? lines.size() - k_traceback_max_lines : 0;
  std::string out;
  std::size_t size = 0;
  std::size_t keep = lines.size();
  while (keep > first && size + lines[keep - 1].size() + 1 <= k_traceback_max_bytes) {
    size += lines[--keep].size() + 1;
  }
  if (keep > 0) {
    out = "...\n";
  }
  for (std::size_t i = keep; i < lines.size(); ++i) {
    out += lines[i] + "\n";
  }
  return out;
}

} // namespace ddl
