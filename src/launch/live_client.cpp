// SPDX-License-Identifier: MIT
#include "src/launch/live_client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/launch/live_protocol.hpp"
#include "src/util/file.hpp"
#include "src/util/log.hpp"
#include "src/util/runtime_dir.hpp"

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto k_retry = std::chrono::milliseconds(10);  // a full backlog is tried again this often

// "12345.sock": the socket of the ddl whose pid is 12345.
bool is_job_socket(const std::string& name) {
  constexpr std::string_view k_suffix = ".sock";
  if (!name.ends_with(k_suffix) || name.size() == k_suffix.size()) {
    return false;
  }
  return std::all_of(name.begin(), name.end() - static_cast<std::ptrdiff_t>(k_suffix.size()),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// One job being asked "info".
struct Asking {
  std::string socket;
  int fd = -1;
  std::string in;
  std::optional<Json> info;
  bool gone = false;     // nobody listens there, or it closed without an answer (it is ending)
  bool stopped = false;  // its ddl is stopped (Ctrl-Z, SIGSTOP) or traced: it cannot answer
  std::string refused;   // its "X ..." answer: it speaks another live protocol version
  bool done() const { return info.has_value() || gone || stopped || !refused.empty(); }
};

// The pid of the ddl that listens on "DIR/12345.sock".
pid_t socket_pid(const std::string& socket) {
  return static_cast<pid_t>(std::stoll(std::filesystem::path(socket).stem().string()));
}

// Whether `pid` is stopped (state T, or t under a tracer), read from
// /proc/PID/stat after the last ')' (the name before it is the process's).
bool is_stopped(pid_t pid) {
  CappedRead file = read_capped(fmt::format("/proc/{}/stat", pid), 4096);
  const std::string& stat = file.text;
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) {
    return false;
  }
  const char state = stat[close + 2];
  return state == 'T' || state == 't';
}

// Connects (never blocking) and sends "info"; false while the backlog is full.
bool try_ask(Asking& ask) {
  auto fd = try_connect_unix(ask.socket);
  if (!fd) {
    if (errno == ECONNREFUSED) {
      std::error_code ec;
      std::filesystem::remove(ask.socket, ec);  // left by a ddl that died (kill -9)
    } else if (errno != ENOENT) {
      print_warning(fd.error().message);
    }
    ask.gone = true;
    return true;
  }
  // A socket that takes connections, or whose backlog is full, is a live
  // ddl's (not a stale one's whose pid was reused): stopped, it never answers.
  if (is_stopped(socket_pid(ask.socket))) {
    if (*fd) {
      ::close(**fd);
    }
    ask.stopped = true;
    return true;
  }
  if (!*fd) {
    return false;
  }
  ask.fd = **fd;
  const std::string info = live_protocol::request_line("info");
  if (::send(ask.fd, info.data(), info.size(), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(info.size())) {
    ask.gone = true;
  }
  return true;
}

// Reads what arrived; the answer once its line is whole.
void read_answer(Asking& ask) {
  char chunk[4096];
  ssize_t got = ::recv(ask.fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return;
  }
  if (got <= 0 || ask.in.size() > (std::size_t{1} << 20)) {
    ask.gone = true;
    return;
  }
  ask.in.append(chunk, static_cast<std::size_t>(got));
  if (auto newline = ask.in.find('\n'); newline != std::string::npos) {
    Json info = Json::parse(ask.in.substr(0, newline), nullptr, false);
    if (ask.in.starts_with("X ")) {
      ask.refused = live_protocol::refusal(std::string_view(ask.in).substr(2, newline - 2));
    } else if (info.is_object()) {
      ask.info = std::move(info);
    } else {
      ask.gone = true;
    }
  }
}

// Asks every socket at once; stops at `deadline` with whatever answered.
void ask_all(std::vector<Asking>& asks, Clock::time_point deadline) {
  while (Clock::now() < deadline && !std::ranges::all_of(asks, &Asking::done)) {
    bool connecting = false;
    std::vector<pollfd> fds;
    std::vector<Asking*> polled;
    for (Asking& ask : asks) {
      if (!ask.done() && ask.fd < 0 && !try_ask(ask)) {
        connecting = true;
      }
      if (!ask.done() && ask.fd >= 0) {
        fds.push_back({ask.fd, POLLIN, 0});
        polled.push_back(&ask);
      }
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    auto wait = connecting ? std::min(left, std::chrono::milliseconds(k_retry)) : left;
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(wait.count(), 0)));
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) {
        read_answer(*polled[i]);
      }
    }
  }
}

// What `ps` knows of a job that did not answer: its id (the socket's stem), and why.
Json silent_info(const Asking& ask) {
  std::string id = std::filesystem::path(ask.socket).stem().string();
  const char* state = ask.stopped ? "stopped" : !ask.refused.empty() ? "another ddl release" : "not answering";
  return Json{{"id", id}, {"pid", std::stoll(id)}, {"state", state}};
}

} // namespace

std::string did_not_answer(const LiveJob& job) {
  std::string who = job.name().empty() ? job.id() : fmt::format("{} ({})", job.name(), job.id());
  if (!job.refused.empty()) {
    return fmt::format("job {}: {}", who, job.refused);
  }
  if (job.stopped) {
    return fmt::format("job {} is stopped (its ddl, pid {}, by Ctrl-Z or SIGSTOP); `kill -CONT {}` resumes it", who,
                       job.id(), job.id());
  }
  return fmt::format("job {} did not answer within {}s (its ddl is stopped, or busy)", who,
                     k_answer_budget.count());
}

Result<std::vector<LiveJob>> running_jobs() {
  struct stat folder {};
  if (::lstat(runtime_dir_path().c_str(), &folder) != 0 && errno == ENOENT) {
    return std::vector<LiveJob>{};  // no job ever ran here
  }
  auto dir = runtime_dir(false);
  if (!dir) {
    return fail(dir.error());
  }
  std::vector<Asking> asks;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(*dir, ec)) {
    if (is_job_socket(entry.path().filename().string())) {
      Asking ask;
      ask.socket = entry.path().string();
      asks.push_back(std::move(ask));
    }
  }
  ask_all(asks, Clock::now() + k_answer_budget);
  std::vector<LiveJob> jobs;
  for (Asking& ask : asks) {
    if (ask.fd >= 0) {
      ::close(ask.fd);
    }
    if (ask.info) {
      jobs.push_back({ask.socket, std::move(*ask.info), true, false, {}});
    } else if (!ask.gone) {
      jobs.push_back({ask.socket, silent_info(ask), false, ask.stopped, ask.refused});
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
  std::vector<LiveJob> named;
  std::vector<std::string> silent;
  std::vector<std::string> stopped;
  for (const LiveJob& job : *jobs) {
    if (job.id() == word && !job.answered) {
      return fail(ExitCode::launch, did_not_answer(job));
    }
    if (job.id() == word) {
      return job;
    }
    if (!job.answered) {
      (job.stopped ? stopped : silent).push_back(job.id());
    } else if (job.name() == word) {
      named.push_back(job);
    }
  }
  if (named.size() == 1) {
    return named.front();
  }
  if (named.size() > 1) {
    std::string ids;
    for (const LiveJob& job : named) {
      ids += fmt::format("{}{}", ids.empty() ? "" : ", ", job.id());
    }
    return fail(ExitCode::usage, fmt::format("{} running jobs are named '{}' (ids {}); name one by its id",
                                             named.size(), word, ids));
  }
  if (!silent.empty() || !stopped.empty()) {
    auto listed = [](const std::vector<std::string>& ids) {
      std::string text;
      for (const std::string& id : ids) {
        text += fmt::format("{}{}", text.empty() ? "" : ", ", id);
      }
      return fmt::format("job{} {}", ids.size() == 1 ? "" : "s", text);
    };
    std::string why;
    if (!silent.empty()) {
      why = fmt::format("{} did not answer within {}s (its ddl is stopped, or busy)", listed(silent),
                        k_answer_budget.count());
    }
    if (!stopped.empty()) {
      why += fmt::format("{}{} {} stopped (Ctrl-Z or SIGSTOP; kill -CONT resumes)", why.empty() ? "" : "; ",
                         listed(stopped), stopped.size() == 1 ? "is" : "are");
    }
    return fail(ExitCode::launch, fmt::format("no job that answered is named '{}'; {}, and may be it", word, why));
  }
  return fail(ExitCode::usage, fmt::format("no running ddl job of yours is named or numbered '{}' ('ddl ps' "
                                           "lists them)", word));
}

Result<LiveConnection> LiveConnection::open(const LiveJob& job, const std::string& request, bool bounded) {
  const auto deadline = Clock::now() + k_answer_budget;
  std::optional<int> fd;
  while (!fd) {
    auto tried = try_connect_unix(job.socket);
    if (!tried) {
      return fail(tried.error());
    }
    fd = *tried;
    if (!fd && Clock::now() >= deadline) {
      return fail(ExitCode::launch, did_not_answer(job));
    }
    if (!fd) {
      std::this_thread::sleep_for(k_retry);
    }
  }
  if (bounded) {
    timeval wait{static_cast<time_t>(k_answer_budget.count()), 0};
    ::setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  }
  std::string line = live_protocol::request_line(request);
  if (::send(*fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    int saved = errno;
    ::close(*fd);
    return fail(ExitCode::launch, fmt::format("cannot ask {}: {}", job.socket, std::strerror(saved)));
  }
  return LiveConnection(*fd, bounded);
}

LiveConnection::LiveConnection(LiveConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), bounded_(other.bounded_), buffer_(std::move(other.buffer_)) {}

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
      if (line.starts_with("X ")) {
        line = "X " + live_protocol::refusal(std::string_view(line).substr(2));
      }
      if (bounded_) {  // it answered: what follows (a stop's end) takes as long as it takes
        timeval forever{0, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof forever);
        bounded_ = false;
      }
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

} // namespace ddl
