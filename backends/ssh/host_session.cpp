// SPDX-License-Identifier: MIT
#include "backends/ssh/host_session.hpp"

#include <libssh/callbacks.h>

#include <chrono>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include "src/util/signals.hpp"

namespace ddl {

void SshSessionFree::operator()(ssh_session session) const {
  if (session != nullptr) {
    ssh_disconnect(session);
    ssh_free(session);
  }
}

bool ssh_session_closed(ssh_session session) {
  return (ssh_get_status(session) & (SSH_CLOSED | SSH_CLOSED_ERROR)) != 0 || ssh_is_connected(session) == 0;
}

namespace {

// A channel of this process's own connection: libssh's channel callbacks
// (never ssh_channel_get_exit_status, which blocks and knows no signals).
class OwnChannel final : public HostChannel {
public:
  OwnChannel(ssh_session session, ChannelListener& listener) : session_(session), listener_(&listener) {}
  ~OwnChannel() override {
    if (channel_ != nullptr) {
      ssh_remove_channel_callbacks(channel_, &callbacks_);
      ssh_channel_free(channel_);
    }
  }
  OwnChannel(const OwnChannel&) = delete;
  OwnChannel& operator=(const OwnChannel&) = delete;

  Result<void> exec(const std::string& command) override {
    channel_ = ssh_channel_new(session_);
    if (channel_ == nullptr) {
      return fail(ExitCode::launch, fmt::format("cannot create a channel: {}", ssh_get_error(session_)));
    }
    ssh_callbacks_init(&callbacks_);
    callbacks_.userdata = this;
    callbacks_.channel_data_function = &OwnChannel::on_data;
    callbacks_.channel_close_function = &OwnChannel::on_close;
    callbacks_.channel_exit_status_function = &OwnChannel::on_exit_status;
    callbacks_.channel_exit_signal_function = &OwnChannel::on_exit_signal;
    ssh_set_channel_callbacks(channel_, &callbacks_);
    if (ssh_channel_open_session(channel_) != SSH_OK) {
      return fail(ExitCode::launch, fmt::format("cannot open a channel: {}", ssh_get_error(session_)));
    }
    if (ssh_channel_request_exec(channel_, command.c_str()) != SSH_OK) {
      return fail(ExitCode::launch, fmt::format("cannot run the shim: {}", ssh_get_error(session_)));
    }
    return {};
  }
  bool write(std::string_view bytes) override {
    return channel_ != nullptr &&
           ssh_channel_write(channel_, bytes.data(), static_cast<uint32_t>(bytes.size())) ==
               static_cast<int>(bytes.size());
  }
  void send_eof() override {
    if (channel_ != nullptr) {
      ssh_channel_send_eof(channel_);
    }
  }
  bool is_open() const override { return channel_ != nullptr && ssh_channel_is_open(channel_) != 0; }
  void relisten(ChannelListener& listener) override { listener_ = &listener; }
  // Held: libssh keeps what arrives (its window then stays shut, and the
  // remote command waits); the status and the end wait behind it.
  void hold_output(bool held) override {
    held_ = held;
    if (!held) {
      pass_on_kept();
    }
  }

private:
  void pass_on_kept() {
    for (bool is_stderr : {false, true}) {
      char buffer[65536];
      int got = 0;
      while (channel_ != nullptr && !held_ &&
             (got = ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, is_stderr ? 1 : 0)) > 0) {
        listener_->data(std::string_view(buffer, static_cast<std::size_t>(got)), is_stderr);
      }
    }
    if (held_) {
      return;
    }
    if (auto status = std::exchange(kept_status_, std::nullopt)) {
      listener_->exit_status(*status);
    }
    if (auto signal = std::exchange(kept_signal_, std::nullopt)) {
      listener_->exit_signal(*signal);
    }
    if (std::exchange(kept_end_, false)) {
      listener_->ended();
    }
  }
  static int on_data(ssh_session, ssh_channel, void* data, uint32_t len, int is_stderr, void* self) {
    auto* channel = static_cast<OwnChannel*>(self);
    if (channel->held_) {
      return 0;
    }
    channel->listener_->data(std::string_view(static_cast<const char*>(data), len), is_stderr != 0);
    return static_cast<int>(len);
  }
  static void on_close(ssh_session, ssh_channel, void* self) {
    auto* channel = static_cast<OwnChannel*>(self);
    if (channel->held_) {
      channel->kept_end_ = true;
    } else {
      channel->listener_->ended();
    }
  }
  static void on_exit_status(ssh_session, ssh_channel, int status, void* self) {
    auto* channel = static_cast<OwnChannel*>(self);
    if (channel->held_) {
      channel->kept_status_ = status;
    } else {
      channel->listener_->exit_status(status);
    }
  }
  static void on_exit_signal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*,
                             void* self) {
    auto* channel = static_cast<OwnChannel*>(self);
    std::string name = signal != nullptr ? signal : "";
    if (channel->held_) {
      channel->kept_signal_ = name;
    } else {
      channel->listener_->exit_signal(name);
    }
  }

  ssh_session session_;
  ChannelListener* listener_;
  ssh_channel channel_ = nullptr;
  ssh_channel_callbacks_struct callbacks_{};
  bool held_ = false;
  std::optional<int> kept_status_;
  std::optional<std::string> kept_signal_;
  bool kept_end_ = false;
};

class OwnSession final : public HostSession {
public:
  explicit OwnSession(SshSessionPtr session) : session_(std::move(session)) {}
  std::unique_ptr<HostChannel> channel(ChannelListener& listener) override {
    return std::make_unique<OwnChannel>(session_.get(), listener);
  }
  void add_to(ssh_event event) override { ssh_event_add_session(event, session_.get()); }
  void remove_from(ssh_event event) override { ssh_event_remove_session(event, session_.get()); }
  bool closed() const override { return ssh_session_closed(session_.get()); }
  std::string error() const override { return ssh_get_error(session_.get()); }

private:
  SshSessionPtr session_;
};

} // namespace

HostSessionPtr own_session(SshSessionPtr session) { return std::make_unique<OwnSession>(std::move(session)); }

void poll_until(HostSession& session, Millis timeout, const std::function<bool()>& done) {
  ssh_event event = ssh_event_new();
  session.add_to(event);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && !session.closed() && !stop::requested() && std::chrono::steady_clock::now() < deadline) {
    ssh_event_dopoll(event, stop::wait_ms(100));
  }
  session.remove_from(event);
  ssh_event_free(event);
}

} // namespace ddl
