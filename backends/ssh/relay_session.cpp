// SPDX-License-Identifier: MIT
#include "backends/ssh/relay_session.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/shim.hpp"
#include "backends/ssh/relay_server.hpp"
#include "backends/ssh/shim_probe.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "backends/ssh/ssh_probe.hpp"
#include "ddl_version.hpp"
#include "src/util/json.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

// One command of the relay. Opening does not wait: what is written meanwhile
// follows the open frame, and a failed open ends the channel with the
// relay's reason on its stderr.
class RelayChannel final : public HostChannel {
public:
  RelayChannel(RelaySession& session, std::uint32_t id, ChannelListener& listener)
      : session_(session), id_(id), listener_(&listener) {
    session_.attach(id_, this);
  }
  ~RelayChannel() override {
    session_.detach(id_);
    if (opened_ && !closed_) {
      session_.send(broker::Type::close, id_);
    }
  }
  RelayChannel(const RelayChannel&) = delete;
  RelayChannel& operator=(const RelayChannel&) = delete;

  Result<void> exec(const std::string& command) override {
    if (!session_.send(broker::Type::open, id_, command)) {
      return fail(ExitCode::launch, fmt::format("cannot open a channel: {}", session_.error()));
    }
    opened_ = true;
    return {};
  }
  bool write(std::string_view bytes) override {
    return is_open() && session_.send(broker::Type::data, id_, bytes);
  }
  void send_eof() override {
    if (is_open()) {
      session_.send(broker::Type::eof, id_);
    }
  }
  bool is_open() const override { return opened_ && !closed_ && !session_.closed(); }
  void relisten(ChannelListener& listener) override { listener_ = &listener; }
  void hold_output(bool held) override {
    if (is_open() && held != held_) {
      held_ = held;
      session_.send(held ? broker::Type::hold : broker::Type::release, id_);
    }
  }

  void receive(const broker::Frame& frame) {
    if (frame.type == broker::Type::open_failed) {
      listener_->data(fmt::format("ddl's relay cannot run the command: {}\n", frame.bytes), true);
      closed_ = true;
      listener_->ended();
      return;
    }
    closed_ = closed_ || frame.type == broker::Type::closed;
    broker::tell(*listener_, frame);
  }

private:
  RelaySession& session_;
  std::uint32_t id_;
  ChannelListener* listener_;
  bool opened_ = false;
  bool closed_ = false;
  bool held_ = false;
};

namespace {

// Exec request: the relay takes over the shim's channel.
constexpr const char* k_exec_relay = "exec \"$1\" worker ssh-relay";

constexpr std::size_t k_stderr_cap = 4096;

// Status 0 where $1 is this ddl ($2: its --version line).
constexpr const char* k_same_ddl_script = "v=$(\"$1\" --version 2>/dev/null) && [ \"$v\" = \"$2\" ]";

} // namespace

Result<std::unique_ptr<RelaySession>> start_relay_where_same_ddl(const SshSection& ssh, const Host& host,
                                                                  SshConnection& connection) {
  const std::string ddl = remote_ddl_path(ssh);
  auto same = ask_shim(ssh, host, connection, k_same_ddl_script, {ddl, "ddl " DDL_VERSION});
  if (!same) {
    return fail(same.error());
  }
  if (same->status != 0 || !connection.shim) {
    spdlog::info("{}: no ddl {} at {}: a login shell per rank", host.name, DDL_VERSION, ddl);
    return std::unique_ptr<RelaySession>();
  }
  return RelaySession::start(*connection.session, std::move(connection.shim), ddl, remote_answer_timeout(ssh));
}

Result<std::unique_ptr<RelaySession>> RelaySession::start(HostSession& connection, std::unique_ptr<ShimChannel> shim,
                                                          const std::string& ddl_path, Millis timeout) {
  std::unique_ptr<RelaySession> relay(new RelaySession(connection));
  auto request = shim_exec_request(k_exec_relay, {ddl_path});
  if (!request) {
    return fail(request.error());
  }
  relay->channel_ = shim->hand_over(*relay);
  shim.reset();
  if (!relay->channel_ || !relay->channel_->write(*request)) {
    return fail(ExitCode::launch, fmt::format("cannot start ddl's relay: {}", connection.error()));
  }
  RelaySession& started = *relay;
  poll_until(connection, timeout, [&started] { return started.greeted_ || started.ended_; });
  if (relay->greeted_ && relay->greeting_error_.empty()) {
    return relay;
  }
  if (stop::requested()) {
    return fail(stop::error("starting ddl's relay"));
  }
  std::string why = !relay->greeting_error_.empty() ? relay->greeting_error_
                    : relay->closed()                ? relay->error()
                                                     : fmt::format("no answer within {:g}s",
                                                                   static_cast<double>(timeout.count()) / 1000.0);
  return fail(ExitCode::launch, fmt::format("cannot start ddl's relay ({} worker ssh-relay): {}", ddl_path, why));
}

RelaySession::~RelaySession() {
  if (channel_ && !ended_) {
    channel_->send_eof();
  }
}

std::unique_ptr<HostChannel> RelaySession::channel(ChannelListener& listener) {
  return std::make_unique<RelayChannel>(*this, next_id_++, listener);
}

std::string RelaySession::error() const {
  if (!ended_) {
    return connection_.error();
  }
  std::string how = status_ ? fmt::format("exit {}", *status_) : !signal_.empty() ? "SIG" + signal_ : "no status";
  std::string said(trim(stderr_));
  return fmt::format("ddl's relay there ended ({}){}", how, said.empty() ? "" : ": " + said);
}

bool RelaySession::send(broker::Type type, std::uint32_t channel, std::string_view bytes) {
  return !closed() && channel_ && channel_->write(broker::encode(type, channel, bytes));
}

void RelaySession::data(std::string_view bytes, bool is_stderr) {
  if (is_stderr) {
    stderr_.append(bytes.substr(0, k_stderr_cap - std::min(k_stderr_cap, stderr_.size())));
    return;
  }
  reader_.feed(bytes);
  while (auto frame = reader_.next()) {
    if (frame->channel == 0 && frame->type == broker::Type::ready) {
      greeted_ = true;
      Json hello = Json::parse(frame->bytes, nullptr, false);
      if (!hello.is_object() || hello.value("version", 0) != k_relay_protocol) {
        greeting_error_ = fmt::format("it speaks {}, this ddl speaks version {}", frame->bytes, k_relay_protocol);
      }
    } else if (auto found = channels_.find(frame->channel); found != channels_.end()) {
      found->second->receive(*frame);
    }
  }
  if (reader_.bad()) {
    stderr_ += "a malformed frame";
    ended();
  }
}

// Its channels stay as they are: like a lost connection, closed() says so.
void RelaySession::ended() { ended_ = true; }

} // namespace ddl
