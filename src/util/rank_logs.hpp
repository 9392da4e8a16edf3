// SPDX-License-Identifier: MIT
#pragma once

// The one place that names the files ddl writes per rank and attempt under
// --log-dir: what the output sinks open, torch's error file, and what
// `ddl sweep` and its trials read back.

#include <string>
#include <string_view>
#include <vector>

namespace ddl {

enum class RankFile {
  log,         // stdout and stderr together: rank-R.attempt-A.log
  stdout_log,  // split logs: rank-R.attempt-A.stdout.log
  stderr_log,  //             rank-R.attempt-A.stderr.log
  error_json,  // torch's TORCHELASTIC_ERROR_FILE: rank-R.attempt-A.error.json
};

// ".log", ".error.json", ...: how the file's name ends.
std::string_view rank_file_suffix(RankFile file);

// "DIR/rank-R.attempt-A.log" and its siblings.
std::string rank_log_path(std::string_view dir, int rank, int attempt, RankFile file = RankFile::log);

// The files that hold the output of `rank` in `attempt`: the one .log, or
// with split logs its .stdout.log and then its .stderr.log.
std::vector<std::string> rank_output_logs(std::string_view dir, int rank, int attempt, bool split);

} // namespace ddl
