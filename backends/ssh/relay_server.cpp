// SPDX-License-Identifier: MIT
#include "backends/ssh/relay_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "backends/ssh/broker_wire.hpp"
#include "src/util/file.hpp"
#include "src/util/process.hpp"
#include "src/util/process_set.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;

class Relay;

// One command the launcher opened; its output and end come through the
// relay's ProcessSet.
struct Command final : ChildEvents {
  Command(Relay& relay_, std::uint32_t id_) : relay(relay_), id(id_) {}
  void output(OutputStream stream, std::string_view bytes) override;
  void ended(int wait_status) override;

  Relay& relay;
  std::uint32_t id;
  pid_t pid = -1;
  int in = -1;
  std::string pending_in;   // for its stdin, not yet taken
  bool eof_wanted = false;  // close stdin once pending_in is written
  bool forgotten = false;   // `close`: no more frames about it
  bool done = false;        // ended: to be dropped
};

class Relay {
public:
  explicit Relay(Millis idle) : idle_(idle) {}
  int run();
  void send(broker::Type type, std::uint32_t channel, std::string_view bytes = {});

private:
  void read_launcher();
  void handle(const broker::Frame& frame);
  void open(std::uint32_t id, const std::string& command);
  static void flush_stdin(Command& command);
  void launcher_gone();

  Millis idle_;
  ProcessSet children_;
  std::map<std::uint32_t, std::unique_ptr<Command>> commands_;
  broker::FrameReader reader_;
  bool stdin_open_ = true;
  bool stdout_open_ = true;
  Clock::time_point last_frame_ = Clock::now();
};

void Command::output(OutputStream stream, std::string_view bytes) {
  if (!forgotten) {
    relay.send(stream == OutputStream::out ? broker::Type::out : broker::Type::err, id, bytes);
  }
}

// After all of its output, as on ssh: the status, then the end.
void Command::ended(int wait_status) {
  done = true;
  close_fd(in);
  if (forgotten) {
    return;
  }
  if (WIFSIGNALED(wait_status)) {
    relay.send(broker::Type::exit_signal, id, signal_abbrev(WTERMSIG(wait_status)));
  } else {
    relay.send(broker::Type::exit_status, id, std::to_string(WEXITSTATUS(wait_status)));
  }
  relay.send(broker::Type::closed, id);
}

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
  auto started = std::make_unique<Command>(*this, id);
  started->pid = spawned.child.pid;
  started->in = spawned.child.in_fd;
  ::fcntl(started->in, F_SETFL, ::fcntl(started->in, F_GETFL) | O_NONBLOCK);
  send(broker::Type::opened, id);
  // A background process holding its output does not hold the channel.
  children_.add(spawned.child, *started, WatchOptions{false, k_relay_drain});
  commands_[id] = std::move(started);
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
    return;  // a beat (channel 0), or a command that ended
  }
  Command& command = *found->second;
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
  case broker::Type::hold:
  case broker::Type::release:
    children_.hold_output(command.pid, frame.type == broker::Type::hold);
    return;
  default:
    return;
  }
  flush_stdin(command);
}

void Relay::read_launcher() {
  pollfd ready{STDIN_FILENO, POLLIN, 0};
  if (::poll(&ready, 1, 0) <= 0) {
    return;
  }
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
  if (stdin_open_) {
    children_.unwatch_fd(STDIN_FILENO);
  }
  stdin_open_ = false;
  for (auto& [id, command] : commands_) {
    command->eof_wanted = true;
    command->pending_in.clear();
    close_fd(command->in);
  }
}

int Relay::run() {
  children_.watch_fd(STDIN_FILENO);
  children_.watch_fd(SignalPipe::fd());
  send(broker::Type::ready, 0, broker::ready_bytes());
  while (stdin_open_ || !commands_.empty()) {
    if (commands_.empty() && Clock::now() - last_frame_ >= idle_) {
      return 0;  // cut off from the launcher, with nothing left to end
    }
    bool pending = std::ranges::any_of(commands_, [](const auto& entry) { return !entry.second->pending_in.empty(); });
    children_.run_once(pending ? 10 : 200);  // a child's full stdin pipe is tried again soon
    if (!SignalPipe::take().empty()) {
      launcher_gone();
    }
    if (stdin_open_) {
      read_launcher();
    }
    for (auto& [id, command] : commands_) {
      flush_stdin(*command);
    }
    std::erase_if(commands_, [](const auto& entry) { return entry.second->done; });
  }
  return 0;
}

} // namespace

int run_ssh_relay(Millis idle) {
  if (!SignalPipe::install()) {
    return 1;
  }
  Relay relay(idle);
  return relay.run();
}

} // namespace ddl
