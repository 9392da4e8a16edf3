// SPDX-License-Identifier: MIT
#include "cmd/live_client.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <regex>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/util/runtime_dir.hpp"

namespace ddl::cmd {

namespace {

// The answer of `socket` to "info"; nullopt when nobody listens there (the
// socket is then removed) or it did not answer.
std::optional<Json> ask_info(const std::string& socket) {
  LiveJob probe{socket, {}};
  auto connection = LiveConnection::open(probe, "info");
  if (!connection) {
    if (errno == ECONNREFUSED) {
      std::error_code ec;
      std::filesystem::remove(socket, ec);  // left by a ddl that died (kill -9)
    } else if (errno != ENOENT) {
      spdlog::warn("{}", connection.error().message);
    }
    return std::nullopt;
  }
  std::string line;
  if (!connection->next_line(line)) {
    spdlog::warn("{} did not answer; left out", socket);
    return std::nullopt;
  }
  Json info = Json::parse(line, nullptr, false);
  return info.is_object() ? std::optional<Json>(info) : std::nullopt;
}

} // namespace

Result<std::vector<LiveJob>> running_jobs() {
  struct stat folder {};
  if (::lstat(runtime_dir_path().c_str(), &folder) != 0 && errno == ENOENT) {
    return std::vector<LiveJob>{};  // no job ever ran here
  }
  auto dir = runtime_dir(false);
  if (!dir) {
    return fail(dir.error());
  }
  static const std::regex socket_name(R"([0-9]+\.sock)");
  std::vector<LiveJob> jobs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(*dir, ec)) {
    if (!std::regex_match(entry.path().filename().string(), socket_name)) {
      continue;
    }
    if (auto info = ask_info(entry.path().string())) {
      jobs.push_back({entry.path().string(), std::move(*info)});
    }
  }
  std::ranges::sort(jobs, {}, [](const LiveJob& job) { return job.info.value("started", ""); });
  return jobs;
}

Result<LiveJob> find_job(const std::string& word) {
  auto jobs = running_jobs();
  if (!jobs) {
    return fail(jobs.error());
  }
  for (const LiveJob& job : *jobs) {
    if (job.id() == word) {
      return job;
    }
  }
  std::vector<LiveJob> named;
  std::ranges::copy_if(*jobs, std::back_inserter(named), [&](const LiveJob& job) { return job.name() == word; });
  if (named.size() == 1) {
    return named.front();
  }
  if (named.empty()) {
    return fail(ExitCode::usage, fmt::format("no running ddl job of yours is named or numbered '{}' ('ddl ps' "
                                             "lists them)", word));
  }
  std::string ids;
  for (const LiveJob& job : named) {
    ids += fmt::format("{}{}", ids.empty() ? "" : ", ", job.id());
  }
  return fail(ExitCode::usage, fmt::format("{} running jobs are named '{}' (ids {}); name one by its id", named.size(),
                                           word, ids));
}

Result<LiveConnection> LiveConnection::open(const LiveJob& job, const std::string& request) {
  auto fd = connect_unix(job.socket);
  if (!fd) {
    return fail(fd.error());
  }
  if (request == "info") {
    timeval wait{3, 0};
    ::setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  }
  std::string line = request + "\n";
  if (::send(*fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    int saved = errno;
    ::close(*fd);
    errno = saved;
    return fail(ExitCode::launch, fmt::format("cannot ask {}: {}", job.socket, std::strerror(saved)));
  }
  return LiveConnection(*fd);
}

LiveConnection::LiveConnection(LiveConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}

LiveConnection::~LiveConnection() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

bool LiveConnection::next_line(std::string& line) {
  while (true) {
    if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
      line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return true;
    }
    char chunk[65536];
    ssize_t got = ::recv(fd_, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return false;
    }
    buffer_.append(chunk, static_cast<std::size_t>(got));
  }
}

} // namespace ddl::cmd
