// SPDX-License-Identifier: MIT
#include "backends/ssh/relay_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "backends/ssh/broker_wire.hpp"
#include "src/util/file.hpp"
#include "src/util/process.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;

int g_child_pipe[2] = {-1, -1};

void on_sigchld(int /*signo*/) {
  int saved = errno;
  char byte = 0;
  [[maybe_unused]] ssize_t ignored = ::write(g_child_pipe[1], &byte, 1);
  errno = saved;
}

void drain(int fd) {
  char buffer[256];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
}

// One command the launcher opened.
struct Command {
  pid_t pid = -1;
  int in = -1;
  int out = -1;
  int err = -1;
  std::string pending_in;        // for its stdin, not yet taken
  bool eof_wanted = false;       // close stdin once pending_in is written
  bool forgotten = false;        // `close`: no more frames about it
  std::optional<Clock::time_point> reaped_at;
};

class Relay {
public:
  explicit Relay(Millis idle) : idle_(idle) {}
  int run();

private:
  void send(broker::Type type, std::uint32_t channel, std::string_view bytes = {});
  void read_launcher();
  void handle(const broker::Frame& frame);
  void open(std::uint32_t id, const std::string& command);
  void flush_stdin(Command& command);
  void forward(std::uint32_t id, Command& command, int& fd, broker::Type type);
  void reap();
  void launcher_gone();
  void finish_ended();
  std::vector<pollfd> poll_set();

  Millis idle_;
  std::map<std::uint32_t, Command> commands_;
  broker::FrameReader reader_;
  bool stdin_open_ = true;
  bool stdout_open_ = true;
  Clock::time_point last_frame_ = Clock::now();
};

void Relay::send(broker::Type type, std::uint32_t channel, std::string_view bytes) {
  if (stdout_open_ && !write_fully(STDOUT_FILENO, broker::encode(type, channel, bytes))) {
    stdout_open_ = false;  // the launcher is gone; EOF on stdin follows
  }
}

void Relay::open(std::uint32_t id, const std::string& command) {
  if (commands_.contains(id)) {
    send(broker::Type::open_failed, id, fmt::format("channel {} is open already", id));
    return;
  }
  SpawnSpec spec;
  spec.argv = {"sh", "-c", command};
  spec.program = "/bin/sh";
  spec.env = environment_with({});
  spec.stdin_pipe = true;
  spec.group = ProcessGroup::new_session;
  SpawnResult spawned = spawn_process(spec);
  if (!spawned) {
    send(broker::Type::open_failed, id, fmt::format("cannot start /bin/sh: {}", std::strerror(spawned.failure.error)));
    return;
  }
  Command& started = commands_[id];
  started.pid = spawned.child.pid;
  started.in = spawned.child.in_fd;
  started.out = spawned.child.out_fd;
  started.err = spawned.child.err_fd;
  for (int fd : {started.in, started.out, started.err}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  send(broker::Type::opened, id);
}

void Relay::flush_stdin(Command& command) {
  while (command.in >= 0 && !command.pending_in.empty()) {
    ssize_t put = ::write(command.in, command.pending_in.data(), command.pending_in.size());
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put < 0 && errno == EAGAIN) {
      return;
    }
    if (put <= 0) {  // it closed its stdin: what it did not read is dropped, as sshd does
      command.pending_in.clear();
      break;
    }
    command.pending_in.erase(0, static_cast<std::size_t>(put));
  }
  if (command.eof_wanted) {
    close_fd(command.in);
  }
}

void Relay::handle(const broker::Frame& frame) {
  if (frame.type == broker::Type::open) {
    open(frame.channel, frame.bytes);
    return;
  }
  auto found = commands_.find(frame.channel);
  if (found == commands_.end()) {
    return;
  }
  Command& command = found->second;
  switch (frame.type) {
  case broker::Type::data:
    if (command.in >= 0 && !command.eof_wanted) {
      command.pending_in += frame.bytes;
    }
    break;
  case broker::Type::close:
    command.forgotten = true;
    [[fallthrough]];
  case broker::Type::eof:
    command.eof_wanted = true;
    break;
  default:
    return;
  }
  flush_stdin(command);
}

void Relay::read_launcher() {
  char buffer[65536];
  ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
    return;
  }
  if (got <= 0) {
    launcher_gone();
    return;
  }
  last_frame_ = Clock::now();
  reader_.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
  while (auto frame = reader_.next()) {
    handle(*frame);
  }
  if (reader_.bad()) {
    launcher_gone();
  }
}

// Every command's stdin closes: each shim ends its rank (TERM, grace, KILL).
void Relay::launcher_gone() {
  stdin_open_ = false;
  for (auto& [id, command] : commands_) {
    command.eof_wanted = true;
    command.pending_in.clear();
    close_fd(command.in);
  }
}

void Relay::forward(std::uint32_t id, Command& command, int& fd, broker::Type type) {
  char buffer[65536];
  ssize_t got = ::read(fd, buffer, sizeof buffer);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
    return;
  }
  if (got <= 0) {
    close_fd(fd);
    return;
  }
  if (!command.forgotten) {
    send(type, id, std::string_view(buffer, static_cast<std::size_t>(got)));
  }
}

void Relay::reap() {
  while (true) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      return;
    }
    for (auto& [id, command] : commands_) {
      if (command.pid != pid) {
        continue;
      }
      command.reaped_at = Clock::now();
      close_fd(command.in);
      if (command.forgotten) {
        break;
      }
      // Its output read so far goes first: the status follows it, as on ssh.
      for (int* fd : {&command.out, &command.err}) {
        while (*fd >= 0) {
          pollfd ready{*fd, POLLIN, 0};
          if (::poll(&ready, 1, 0) <= 0) {
            break;
          }
          forward(id, command, *fd, fd == &command.out ? broker::Type::out : broker::Type::err);
        }
      }
      if (WIFSIGNALED(status)) {
        send(broker::Type::exit_signal, id, signal_abbrev(WTERMSIG(status)));
      } else {
        send(broker::Type::exit_status, id, std::to_string(WEXITSTATUS(status)));
      }
      break;
    }
  }
}

// A reaped command whose output ended, or that ended k_relay_drain ago,
// is closed.
void Relay::finish_ended() {
  const auto now = Clock::now();
  for (auto it = commands_.begin(); it != commands_.end();) {
    Command& command = it->second;
    bool drained = command.out < 0 && command.err < 0;
    if (!command.reaped_at || (!drained && now - *command.reaped_at < k_relay_drain)) {
      ++it;
      continue;
    }
    close_fd(command.out);
    close_fd(command.err);
    if (!command.forgotten) {
      send(broker::Type::closed, it->first);
    }
    it = commands_.erase(it);
  }
}

std::vector<pollfd> Relay::poll_set() {
  std::vector<pollfd> fds;
  fds.push_back({g_child_pipe[0], POLLIN, 0});
  fds.push_back({SignalPipe::fd(), POLLIN, 0});
  if (stdin_open_) {
    fds.push_back({STDIN_FILENO, POLLIN, 0});
  }
  for (auto& [id, command] : commands_) {
    for (int fd : {command.out, command.err}) {
      if (fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
      }
    }
    if (command.in >= 0 && !command.pending_in.empty()) {
      fds.push_back({command.in, POLLOUT, 0});
    }
  }
  return fds;
}

int Relay::run() {
  send(broker::Type::ready, 0, fmt::format("{{\"version\":{}}}", k_relay_protocol));
  while (stdin_open_ || !commands_.empty()) {
    if (commands_.empty() && Clock::now() - last_frame_ >= idle_) {
      return 0;  // cut off from the launcher, with nothing left to end
    }
    auto fds = poll_set();
    int ready = ::poll(fds.data(), fds.size(), 200);
    if (ready < 0 && errno != EINTR) {
      return 1;
    }
    drain(g_child_pipe[0]);
    if (!SignalPipe::take().empty()) {
      launcher_gone();
    }
    for (const auto& entry : fds) {
      if (entry.fd == STDIN_FILENO && (entry.revents & (POLLIN | POLLHUP | POLLERR)) != 0 && stdin_open_) {
        read_launcher();
      }
    }
    for (auto& [id, command] : commands_) {
      for (const auto& entry : fds) {
        if ((entry.revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
          continue;
        }
        if (entry.fd == command.out && command.out >= 0) {
          forward(id, command, command.out, broker::Type::out);
        } else if (entry.fd == command.err && command.err >= 0) {
          forward(id, command, command.err, broker::Type::err);
        }
      }
      flush_stdin(command);
    }
    reap();
    finish_ended();
  }
  return 0;
}

} // namespace

int run_ssh_relay(Millis idle) {
  if (::pipe2(g_child_pipe, O_CLOEXEC | O_NONBLOCK) != 0 || !SignalPipe::install()) {
    return 1;
  }
  struct sigaction action {};
  action.sa_handler = &on_sigchld;
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGCHLD, &action, nullptr);
  Relay relay(idle);
  return relay.run();
}

} // namespace ddl
