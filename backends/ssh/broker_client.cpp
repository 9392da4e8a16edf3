// SPDX-License-Identifier: MIT
#include "backends/ssh/broker_client.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include <fmt/core.h>

#include "backends/ssh/frame_session.hpp"
#include "src/util/file.hpp"
#include "src/util/json.hpp"
#include "src/util/runtime_dir.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;

// The trial's unix connection to the broker.
class BrokerPipe final : public FramePipe {
public:
  BrokerPipe(int fd, std::string socket) : fd_(fd), socket_(std::move(socket)) {}
  ~BrokerPipe() override { ::close(fd_); }
  BrokerPipe(const BrokerPipe&) = delete;
  BrokerPipe& operator=(const BrokerPipe&) = delete;

  bool send(std::string_view bytes) override {
    if (!ended_ && !write_fully(fd_, bytes)) {
      end(fmt::format("{} is gone", name()));
    }
    return !ended_;
  }
  void add_to(ssh_event event) override { ssh_event_add_fd(event, fd_, POLLIN, &BrokerPipe::on_readable, this); }
  void remove_from(ssh_event event) override { ssh_event_remove_fd(event, fd_); }
  bool ended() const override { return ended_; }
  std::string error() const override { return error_; }
  void malformed() override { end(fmt::format("{} sent a malformed frame", name())); }
  std::string name() const override { return fmt::format("the sweep's session broker ({})", socket_); }

private:
  static int on_readable(socket_t, int, void* self) {
    static_cast<BrokerPipe*>(self)->read_some();
    return 0;
  }
  void read_some() {
    if (ended_) {
      return;
    }
    char buffer[65536];
    ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
      return;
    }
    if (got <= 0) {
      end(fmt::format("{} ended", name()));
      return;
    }
    deliver(std::string_view(buffer, static_cast<std::size_t>(got)));
  }
  void end(std::string why) {
    if (!ended_) {
      ended_ = true;
      error_ = std::move(why);
    }
  }

  int fd_;
  std::string socket_;
  bool ended_ = false;
  std::string error_;
};

// Connects to the broker's socket (a full backlog is tried again until
// `deadline`).
Result<int> connect_broker(const std::string& socket, Clock::time_point deadline) {
  while (true) {
    auto connected = try_connect_unix(socket);
    if (!connected) {
      return fail(ExitCode::launch,
                  fmt::format("cannot reach the sweep's session broker ({}): {}", socket, connected.error().message));
    }
    if (*connected) {
      return **connected;
    }
    if (Clock::now() >= deadline || stop::requested()) {
      return fail(ExitCode::launch, fmt::format("the sweep's session broker ({}) does not accept connections", socket));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The host, as the broker's hello names it.
std::string hello_for(const Host& host) {
  Json hello{{"version", broker::k_protocol}, {"name", host.name}, {"address", host.address}, {"user", host.user}};
  if (host.port) {
    hello["port"] = *host.port;
  }
  return to_json_text(hello);
}

} // namespace

Result<HostSessionPtr> broker_open(const SshSection& ssh, const Host& host, Millis answer_timeout) {
  auto fd = connect_broker(ssh.broker, Clock::now() + answer_timeout);
  if (!fd) {
    return fail(fd.error());
  }
  auto session = std::make_unique<FrameSession>(std::make_unique<BrokerPipe>(*fd, ssh.broker),
                                                FrameChannelMode{.exec_waits = true, .holds_output = false},
                                                answer_timeout);
  if (auto greeted = session->greet(hello_for(host), "connecting"); !greeted) {
    return fail(greeted.error());
  }
  return HostSessionPtr(std::move(session));
}

} // namespace ddl
