// SPDX-License-Identifier: MIT
#include "src/sweep/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include <fmt/core.h>

#include "src/util/json.hpp"
#include "src/util/process.hpp"

namespace ddl::sweep {

Journal::Journal(Journal&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

Journal& Journal::operator=(Journal&& other) noexcept {
  if (this != &other) {
    close_fd(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

Journal::~Journal() { close_fd(fd_); }

Result<Journal> Journal::open(const std::string& dir, bool create) {
  Journal journal;
  journal.path_ = dir + "/" + k_journal_name;
  const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
  journal.fd_ = ::open(journal.path_.c_str(), flags, 0644);
  if (journal.fd_ < 0) {
    return fail(ExitCode::launch, fmt::format("cannot open {}: {}", journal.path_, std::strerror(errno)));
  }
  return journal;
}

Result<void> Journal::append(Json record) {
  record["time"] = event_time_now();
  std::string line = to_json_text(record) + "\n";
  std::string_view left = line;
  while (!left.empty()) {
    ssize_t wrote = ::write(fd_, left.data(), left.size());
    if (wrote < 0 && errno == EINTR) {
      continue;
    }
    if (wrote <= 0) {
      return fail(ExitCode::launch, fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    }
    left.remove_prefix(static_cast<std::size_t>(wrote));
  }
  if (::fsync(fd_) != 0) {
    return fail(ExitCode::launch, fmt::format("cannot sync {}: {}", path_, std::strerror(errno)));
  }
  return {};
}

Result<JournalState> read_journal(const std::string& dir) {
  const std::string path = dir + "/" + k_journal_name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(ExitCode::usage, fmt::format("{}: no sweep journal there ({})", dir, std::strerror(errno)));
  }
  JournalState state;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    Json record = Json::parse(line, nullptr, false);
    if (!record.is_object() || !record.contains("event")) {
      if (in.peek() == std::char_traits<char>::eof()) {
        break;  // torn by a crash mid-write
      }
      return fail(ExitCode::usage, fmt::format("{}:{}: not a journal record", path, number));
    }
    const std::string event = record.value("event", "");
    if (number == 1 && event != "sweep") {
      return fail(ExitCode::usage, fmt::format("{}:1: not a ddl sweep journal", path));
    }
    if (event == "sweep") {
      state.sweep = std::move(record);
    } else if (event == "started" || event == "finished") {
      const int trial = record.value("trial", -1);
      if (event == "finished" && record.value("final", false)) {
        state.finished[trial] = std::move(record);
      } else {
        state.finished.erase(trial);
      }
    }
  }
  if (state.sweep.is_null()) {
    return fail(ExitCode::usage, fmt::format("{}: empty journal", path));
  }
  return state;
}

} // namespace ddl::sweep
