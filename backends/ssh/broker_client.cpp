// SPDX-License-Identifier: MIT
#include "backends/ssh/broker_client.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/core.h>

#include "backends/ssh/broker_wire.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "src/util/file.hpp"
#include "src/util/json.hpp"
#include "src/util/runtime_dir.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;

class BrokerSession;

class BrokerChannel final : public HostChannel {
public:
  enum class State { idle, opening, open, failed, closed };
  BrokerChannel(BrokerSession& session, std::uint32_t id, ChannelListener& listener);
  ~BrokerChannel() override;
  BrokerChannel(const BrokerChannel&) = delete;
  BrokerChannel& operator=(const BrokerChannel&) = delete;

  Result<void> exec(const std::string& command) override;
  bool write(std::string_view bytes) override;
  void send_eof() override;
  bool is_open() const override;
  void relisten(ChannelListener& listener) override { listener_ = &listener; }
  // A frame about this channel from the broker.
  void receive(const broker::Frame& frame);

private:
  BrokerSession& session_;
  std::uint32_t id_;
  ChannelListener* listener_;
  State state_ = State::idle;
  std::string why_;  // open_failed
};

class BrokerSession final : public HostSession {
public:
  BrokerSession(int fd, std::string socket, Millis answer_timeout)
      : fd_(fd), socket_(std::move(socket)), answer_timeout_(answer_timeout) {}
  ~BrokerSession() override { ::close(fd_); }
  BrokerSession(const BrokerSession&) = delete;
  BrokerSession& operator=(const BrokerSession&) = delete;

  std::unique_ptr<HostChannel> channel(ChannelListener& listener) override {
    return std::make_unique<BrokerChannel>(*this, next_id_++, listener);
  }
  void add_to(ssh_event event) override { ssh_event_add_fd(event, fd_, POLLIN, &BrokerSession::on_readable, this); }
  void remove_from(ssh_event event) override { ssh_event_remove_fd(event, fd_); }
  bool closed() const override { return closed_; }
  std::string error() const override { return error_; }

  bool send(broker::Type type, std::uint32_t channel, std::string_view bytes = {}) {
    if (closed_) {
      return false;
    }
    if (!write_fully(fd_, broker::encode(type, channel, bytes))) {
      end(fmt::format("the sweep's session broker ({}) is gone", socket_));
      return false;
    }
    return true;
  }
  // Reads and dispatches frames until `done()`, the session ends, Ctrl-C
  // or the answer timeout; false unless done().
  template <typename Done>
  bool wait_until(Done done) {
    const auto deadline = Clock::now() + answer_timeout_;
    while (!done() && !closed_ && !stop::requested() && Clock::now() < deadline) {
      pollfd ready{fd_, POLLIN, 0};
      if (::poll(&ready, 1, stop::wait_ms(100)) > 0) {
        read_some();
      }
    }
    return done();
  }
  // The answer to hello: ready, or why not.
  Result<void> greet(const Host& host) {
    Json hello{{"version", broker::k_protocol}, {"name", host.name}, {"address", host.address}, {"user", host.user}};
    if (host.port) {
      hello["port"] = *host.port;
    }
    std::optional<std::string> refused;
    bool ready = false;
    greeting_ = [&](const broker::Frame& frame) {
      ready = frame.type == broker::Type::ready;
      refused = frame.type == broker::Type::refused ? frame.bytes : "";
    };
    send(broker::Type::hello, 0, to_json_text(hello));
    wait_until([&] { return ready || refused.has_value(); });
    greeting_ = nullptr;
    if (ready) {
      return {};
    }
    if (refused && !refused->empty()) {
      return fail(ExitCode::launch, *refused);
    }
    if (stop::requested()) {
      return fail(stop::error("connecting"));
    }
    return fail(ExitCode::launch, closed_ ? error_
                                          : fmt::format("the sweep's session broker ({}) did not answer within {:g}s",
                                                        socket_, static_cast<double>(answer_timeout_.count()) / 1000.0));
  }
  void attach(std::uint32_t id, BrokerChannel* channel) { channels_[id] = channel; }
  void detach(std::uint32_t id) { channels_.erase(id); }
  const std::string& socket() const { return socket_; }
  Millis answer_timeout() const { return answer_timeout_; }

private:
  static int on_readable(socket_t, int, void* self) {
    static_cast<BrokerSession*>(self)->read_some();
    return 0;
  }
  void end(std::string why) {
    if (!closed_) {
      closed_ = true;
      error_ = std::move(why);
    }
  }
  void read_some() {
    if (closed_) {
      return;
    }
    char buffer[65536];
    ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
      return;
    }
    if (got <= 0) {
      end(fmt::format("the sweep's session broker ({}) ended", socket_));
      return;
    }
    reader_.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
    while (auto frame = reader_.next()) {
      dispatch(*frame);
    }
    if (reader_.bad()) {
      end(fmt::format("the sweep's session broker ({}) sent a malformed frame", socket_));
    }
  }
  void dispatch(const broker::Frame& frame) {
    if (frame.type == broker::Type::lost) {
      end(frame.bytes);
    } else if (frame.channel == 0 && greeting_) {
      greeting_(frame);
    } else if (auto found = channels_.find(frame.channel); found != channels_.end()) {
      found->second->receive(frame);
    }
  }

  int fd_;
  std::string socket_;
  Millis answer_timeout_;
  broker::FrameReader reader_;
  std::map<std::uint32_t, BrokerChannel*> channels_;
  std::function<void(const broker::Frame&)> greeting_;
  std::uint32_t next_id_ = 1;
  bool closed_ = false;
  std::string error_;
};

BrokerChannel::BrokerChannel(BrokerSession& session, std::uint32_t id, ChannelListener& listener)
    : session_(session), id_(id), listener_(&listener) {
  session_.attach(id_, this);
}

BrokerChannel::~BrokerChannel() {
  session_.detach(id_);
  if (state_ == State::open) {
    session_.send(broker::Type::close, id_);
  }
}

Result<void> BrokerChannel::exec(const std::string& command) {
  state_ = State::opening;
  session_.send(broker::Type::open, id_, command);
  if (session_.wait_until([this] { return state_ != State::opening; })) {
    if (state_ == State::failed) {
      return fail(ExitCode::launch, why_);
    }
    return {};
  }
  state_ = State::failed;
  if (stop::requested()) {
    return fail(stop::error("opening a channel"));
  }
  return fail(ExitCode::launch,
              fmt::format("cannot open a channel: {}",
                          session_.closed() ? session_.error()
                                            : fmt::format("the sweep's session broker ({}) did not answer within {:g}s",
                                                          session_.socket(),
                                                          static_cast<double>(session_.answer_timeout().count()) /
                                                              1000.0)));
}

bool BrokerChannel::write(std::string_view bytes) {
  return state_ == State::open && session_.send(broker::Type::data, id_, bytes);
}

void BrokerChannel::send_eof() {
  if (state_ == State::open) {
    session_.send(broker::Type::eof, id_);
  }
}

bool BrokerChannel::is_open() const { return state_ == State::open && !session_.closed(); }

void BrokerChannel::receive(const broker::Frame& frame) {
  if (frame.type == broker::Type::opened) {
    state_ = State::open;
  } else if (frame.type == broker::Type::open_failed) {
    state_ = State::failed;
    why_ = frame.bytes;
  } else {
    state_ = frame.type == broker::Type::closed ? State::closed : state_;
    broker::tell(*listener_, frame);
  }
}

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

} // namespace

Result<HostSessionPtr> broker_open(const SshSection& ssh, const Host& host) {
  // The broker may first connect to the host (connect_timeout) for trials ahead of this one.
  const Millis timeout = remote_answer_timeout(ssh) + ssh.connect_timeout;
  auto fd = connect_broker(ssh.broker, Clock::now() + timeout);
  if (!fd) {
    return fail(fd.error());
  }
  auto session = std::make_unique<BrokerSession>(*fd, ssh.broker, timeout);
  if (auto greeted = session->greet(host); !greeted) {
    return fail(greeted.error());
  }
  return HostSessionPtr(std::move(session));
}

} // namespace ddl
