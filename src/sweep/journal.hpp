// SPDX-License-Identifier: MIT
// The sweep's journal: JSON Lines in SWEEP_DIR/journal.jsonl, one record per
// event (the sweep and its trials, each attempt started and finished, hosts
// excluded), each written whole and fsync'ed before the sweep goes on, so
// that `ddl sweep --resume DIR` after any crash (kill -9 included) knows
// which trials finished.
#pragma once

#include <map>
#include <string>

#include "src/util/error.hpp"
#include "src/util/json.hpp"

namespace ddl::sweep {

inline constexpr const char* k_journal_name = "journal.jsonl";

class Journal {
public:
  Journal() = default;
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&& other) noexcept;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

  // Opens DIR/journal.jsonl to append; `create`: it must not exist yet.
  // Else (--resume) a torn last line (no newline: a crash mid-write) is cut
  // off first, with a warning, so that what is appended stays whole.
  static Result<Journal> open(const std::string& dir, bool create);
  // One record (a JSON object; "time" is added), written and fsync'ed.
  Result<void> append(Json record);

private:
  int fd_ = -1;
  std::string path_;
};

// What a journal says, for --resume.
struct JournalState {
  Json sweep;                          // the first record: the sweep and its trials
  std::map<int, Json> finished;        // per trial whose last attempt was final: that record
};

// Reads DIR/journal.jsonl. A torn last line (no newline: a crash mid-write)
// is ignored; any other bad line is an error (ExitCode::usage) naming it.
Result<JournalState> read_journal(const std::string& dir);

} // namespace ddl::sweep
