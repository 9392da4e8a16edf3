// SPDX-License-Identifier: MIT
#include "src/launch/output.hpp"

#include <array>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fcntl.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/util/json.hpp"

namespace ddl {

bool write_fully(int fd, std::string_view a, std::string_view b, std::string_view c) {
  std::array<std::string_view, 3> parts{a, b, c};
  std::size_t first = 0;
  while (true) {
    std::array<iovec, 3> iov{};
    int count = 0;
    for (std::size_t i = first; i < parts.size(); ++i) {
      if (!parts[i].empty()) {
        iov[static_cast<std::size_t>(count)].iov_base = const_cast<char*>(parts[i].data());
        iov[static_cast<std::size_t>(count)].iov_len = parts[i].size();
        ++count;
      }
    }
    if (count == 0) {
      return true;
    }
    ssize_t written = ::writev(fd, iov.data(), count);
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN) {  // someone made our stdout non-blocking
        pollfd wait{fd, POLLOUT, 0};
        ::poll(&wait, 1, 100);
        continue;
      }
      return false;
    }
    auto left = static_cast<std::size_t>(written);
    for (std::size_t i = first; i < parts.size(); ++i) {
      std::size_t take = std::min(left, parts[i].size());
      parts[i].remove_prefix(take);
      left -= take;
      if (parts[i].empty()) {
        first = i + 1;
      } else {
        break;
      }
    }
  }
}

std::string signal_name(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signo);
}

std::string describe_exit(const RankExit& how) {
  if (!how.launch_error.empty()) {
    return "launch error: " + how.launch_error;
  }
  if (how.signal != 0) {
    return signal_name(how.signal);
  }
  return fmt::format("exit code {}", how.code);
}

std::string event_time_now() {
  auto now = std::chrono::system_clock::now();
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", text.data(), millis % 1000);
}

Output::Output(OutputOptions options) : options_(std::move(options)) {}

Output::~Output() { end_attempt(); }

Result<void> Output::begin_attempt(int attempt, int world_size) {
  end_attempt();
  if (options_.log_dir.empty()) {
    return {};
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.log_dir, ec);
  if (ec) {
    return fail(ExitCode::usage, fmt::format("cannot create log directory {}: {}", options_.log_dir, ec.message()));
  }
  std::lock_guard lock(mutex_);
  for (int rank = 0; rank < world_size; ++rank) {
    std::string path = fmt::format("{}/rank-{}.attempt-{}.log", options_.log_dir, rank, attempt);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::string reason = std::strerror(errno);
      for (int open_fd : log_fds_) {
        ::close(open_fd);
      }
      log_fds_.clear();
      return fail(ExitCode::usage, fmt::format("cannot write log file {}: {}", path, reason));
    }
    log_fds_.push_back(fd);
  }
  return {};
}

void Output::end_attempt() {
  std::lock_guard lock(mutex_);
  for (int fd : log_fds_) {
    ::close(fd);
  }
  log_fds_.clear();
}

namespace {

// A JSON Lines event: "event" and "time" first, then what the caller adds.
Json event(std::string_view kind) {
  return {{"event", kind}, {"time", event_time_now()}};
}

// Milliseconds are what the clock resolves; more digits would be noise.
double rounded_to_millis(double seconds) { return std::round(seconds * 1000) / 1000; }

} // namespace

void Output::started(int rank, std::string_view host, long pid, int attempt) {
  if (!options_.json) {
    return;
  }
  std::lock_guard lock(mutex_);
  Json started = event("started");
  started.update({{"rank", rank}, {"host", host}, {"pid", pid}, {"attempt", attempt}});
  write_out(to_json_text(started), "\n");
}

void Output::line(int rank, Stream stream, std::string_view text) {
  std::lock_guard lock(mutex_);
  write_log(rank, text);
  if (options_.json) {
    Json line = event("output");
    line.update({{"rank", rank}, {"stream", stream == Stream::out ? "stdout" : "stderr"}, {"line", valid_utf8(text)}});
    write_out(to_json_text(line), "\n");
    return;
  }
  std::string prefix = fmt::format("[{}] ", rank);
  if (stream == Stream::out) {
    write_out(prefix, text, "\n");
  } else {
    write_err(prefix, text, "\n");
  }
}

void Output::exited(int rank, const RankExit& how) {
  if (!options_.json) {
    return;
  }
  std::lock_guard lock(mutex_);
  Json exited = event("exited");
  exited["rank"] = rank;
  if (!how.launch_error.empty()) {
    exited["error"] = how.launch_error;
  } else {
    exited["code"] = how.code;
    if (how.signal != 0) {
      exited["signal"] = signal_name(how.signal);
    }
  }
  write_out(to_json_text(exited), "\n");
}

void Output::restarting(int attempt, int max_restarts) {
  std::lock_guard lock(mutex_);
  if (options_.json) {
    Json restart = event("restart");
    restart.update({{"attempt", attempt}, {"max_restarts", max_restarts}});
    write_out(to_json_text(restart), "\n");
  }
}

void Output::summary(const JobSummary& summary) {
  if (!options_.json) {
    return;
  }
  std::lock_guard lock(mutex_);
  Json done = event("summary");
  done.update({{"result", summary.result}, {"exit_code", summary.exit_code}, {"attempts", summary.attempts},
               {"elapsed_s", rounded_to_millis(summary.elapsed_s)}});
  if (summary.failed_rank >= 0) {
    done.update({{"failed_rank", summary.failed_rank}, {"host", summary.host}, {"code", summary.how.code}});
    if (summary.how.signal != 0) {
      done["signal"] = signal_name(summary.how.signal);
    }
    if (const auto& error = summary.rank_error) {
      done["error"] = {{"message", error->message}, {"traceback", error->traceback},
                       {"timestamp", error->timestamp}};
    }
  }
  write_out(to_json_text(done), "\n");
}

void Output::message(std::string_view text) {
  std::lock_guard lock(mutex_);
  write_err(text);
}

void Output::on_stdout_closed(std::function<void()> callback) {
  std::lock_guard lock(mutex_);
  stdout_closed_callback_ = std::move(callback);
}

void Output::write_out(std::string_view a, std::string_view b, std::string_view c) {
  if (stdout_closed_.load()) {
    return;
  }
  if (!write_fully(options_.stdout_fd, a, b, c) && errno == EPIPE) {
    stdout_closed_.store(true);
    if (stdout_closed_callback_) {
      stdout_closed_callback_();
    }
  }
}

void Output::write_err(std::string_view a, std::string_view b, std::string_view c) {
  write_fully(options_.stderr_fd, a, b, c);  // nowhere left to report a failure
}

void Output::write_log(int rank, std::string_view text) {
  auto index = static_cast<std::size_t>(rank);
  if (index < log_fds_.size()) {
    write_fully(log_fds_[index], text, "\n");
  }
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    bool ok = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k) {
      ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (ok && length > 1) {
      // Overlong forms, surrogates and code points above U+10FFFF.
      auto second = static_cast<unsigned char>(text[i + 1]);
      ok = !(lead == 0xC0 || lead == 0xC1 || (lead == 0xE0 && second < 0xA0) || (lead == 0xED && second >= 0xA0) ||
             (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second >= 0x90) || lead > 0xF4);
    }
    if (ok) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      ++i;
    }
  }
  return out;
}

} // namespace ddl
