// SPDX-License-Identifier: MIT
#include "src/sweep/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/core.h>

#include "src/util/json.hpp"
#include "src/util/log.hpp"
#include "src/util/own_path.hpp"
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

namespace {

// A journal is a line per trial event: 1 GiB is far beyond any sweep's.
constexpr std::size_t k_max_journal_bytes = std::size_t{1} << 30;

// The whole file behind `fd`, from its start.
Result<std::string> read_all(int fd, const std::string& path) {
  std::string text;
  char chunk[65536];
  for (off_t at = 0;;) {
    ssize_t got = ::pread(fd, chunk, sizeof chunk, at);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return fail(ExitCode::launch, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    }
    if (got == 0) {
      return text;
    }
    text.append(chunk, static_cast<std::size_t>(got));
    at += got;
  }
}

// A crash mid-append leaves a last line without its newline: cut it off (and
// say so) before anything is appended, which would glue the next record to it.
Result<void> drop_torn_tail(int fd, const std::string& path) {
  auto text = read_all(fd, path);
  if (!text) {
    return fail(text.error());
  }
  if (text->empty() || text->back() == '\n') {
    return {};
  }
  const std::size_t whole = text->rfind('\n') == std::string::npos ? 0 : text->rfind('\n') + 1;
  if (::ftruncate(fd, static_cast<off_t>(whole)) != 0) {
    return fail(ExitCode::launch, fmt::format("cannot cut the torn last line of {}: {}", path, std::strerror(errno)));
  }
  const auto line = std::count(text->begin(), text->end(), '\n') + 1;
  print_warning(fmt::format("{}:{}: dropped the torn last line ({} bytes without a newline; a crash cut it)", path,
                            line, text->size() - whole));
  return {};
}

} // namespace

Result<Journal> Journal::open(const std::string& dir, bool create) {
  Journal journal;
  journal.path_ = dir + "/" + k_journal_name;
  const int flags = (create ? O_WRONLY | O_CREAT | O_EXCL : O_RDWR) | O_APPEND;
  auto opened = open_own_file(journal.path_, flags, "sweep journal");
  if (!opened) {
    return fail(opened.error());
  }
  journal.fd_ = *opened;
  if (!create) {
    if (auto dropped = drop_torn_tail(journal.fd_, journal.path_); !dropped) {
      return fail(dropped.error());
    }
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
  auto read = read_own_file(path, "sweep journal", k_max_journal_bytes);
  if (!read && read.error().code == ExitCode::launch) {
    return fail(ExitCode::usage, fmt::format("{}: no sweep journal there ({})", dir, std::strerror(errno)));
  }
  if (!read) {
    return fail(read.error());
  }
  const std::string text = std::move(*read);
  JournalState state;
  int number = 0;
  // Whole lines only: a last line without its newline was torn by a crash.
  for (std::size_t start = 0, end = text.find('\n'); end != std::string::npos;
       start = end + 1, end = text.find('\n', start)) {
    ++number;
    Json record = Json::parse(std::string_view(text).substr(start, end - start), nullptr, false);
    if (!record.is_object() || !record.contains("event")) {
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
