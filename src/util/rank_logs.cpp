// SPDX-License-Identifier: MIT
#include "src/util/rank_logs.hpp"

#include <fmt/core.h>

namespace ddl {

std::string_view rank_file_suffix(RankFile file) {
  switch (file) {
  case RankFile::log: return ".log";
  case RankFile::stdout_log: return ".stdout.log";
  case RankFile::stderr_log: return ".stderr.log";
  case RankFile::error_json: return ".error.json";
  }
  return ".log";
}

std::string rank_log_path(std::string_view dir, int rank, int attempt, RankFile file) {
  return fmt::format("{}/rank-{}.attempt-{}{}", dir, rank, attempt, rank_file_suffix(file));
}

std::vector<std::string> rank_output_logs(std::string_view dir, int rank, int attempt, bool split) {
  if (!split) {
    return {rank_log_path(dir, rank, attempt)};
  }
  return {rank_log_path(dir, rank, attempt, RankFile::stdout_log),
          rank_log_path(dir, rank, attempt, RankFile::stderr_log)};
}

} // namespace ddl
