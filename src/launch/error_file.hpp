// SPDX-License-Identifier: MIT
#pragma once

// torch's per-rank error file (TORCHELASTIC_ERROR_FILE): what a program
// decorated with torch.distributed.elastic.multiprocessing.errors.record
// writes when it raises, shown in ddl's failure summary.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ddl {

// The largest error file ddl reads, and the most of its traceback it shows.
inline constexpr std::size_t k_error_file_max_bytes = 256 * 1024;
inline constexpr std::size_t k_traceback_max_lines = 40;
inline constexpr std::size_t k_traceback_max_bytes = 8 * 1024;

struct RankError {
  std::string message;    // "ValueError: boom"
  std::string traceback;  // the Python call stack, its last lines only
  std::string timestamp;  // seconds since the epoch, as torch wrote it
};

// torch's JSON: {"message": {"message": M, "extraInfo": {"py_callstack": T,
// "timestamp": S}}}, or {"message": M}. nullopt for anything else.
std::optional<RankError> parse_torch_error_file(std::string_view text);

// The last k_traceback_max_lines lines of `traceback`, at most
// k_traceback_max_bytes, with "..." first when cut.
std::string bounded_traceback(std::string_view traceback);

} // namespace ddl
