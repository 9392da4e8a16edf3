// SPDX-License-Identifier: MIT
#include "backends/ssh/shim_channel.hpp"

#include <fmt/core.h>

#include "src/util/signal_names.hpp"

namespace ddl {

ShimChannel::ShimChannel(ssh_session session, Sink* sink) : session_(session), sink_(sink) {}

void ShimChannel::attach(Sink& sink) {
  sink_ = &sink;
  if (stderr_filter_.decided()) {
    report_started();
  }
  if (!held_stderr_.empty()) {
    sink_->output(Stream::err, std::exchange(held_stderr_, {}));
  }
}

Result<void> ShimChannel::send_payload(const std::string& payload) {
  if (channel_ == nullptr || closed_ ||
      ssh_channel_write(channel_, payload.data(), static_cast<uint32_t>(payload.size())) !=
          static_cast<int>(payload.size())) {
    return fail(ExitCode::launch, fmt::format("cannot send the rank's setup: {}", ssh_get_error(session_)));
  }
  return {};
}

ShimChannel::~ShimChannel() {
  if (channel_ != nullptr) {
    ssh_remove_channel_callbacks(channel_, &callbacks_);
    ssh_channel_free(channel_);
  }
}

Result<void> ShimChannel::start(const std::string& payload) {
  channel_ = ssh_channel_new(session_);
  if (channel_ == nullptr) {
    return fail(ExitCode::launch, fmt::format("cannot create a channel: {}", ssh_get_error(session_)));
  }
  ssh_callbacks_init(&callbacks_);
  callbacks_.userdata = this;
  callbacks_.channel_data_function = &ShimChannel::on_data;
  callbacks_.channel_close_function = &ShimChannel::on_close;
  callbacks_.channel_exit_status_function = &ShimChannel::on_exit_status;
  callbacks_.channel_exit_signal_function = &ShimChannel::on_exit_signal;
  ssh_set_channel_callbacks(channel_, &callbacks_);
  if (ssh_channel_open_session(channel_) != SSH_OK) {
    return fail(ExitCode::launch, fmt::format("cannot open a channel: {}", ssh_get_error(session_)));
  }
  if (ssh_channel_request_exec(channel_, shim_ssh_command().c_str()) != SSH_OK) {
    return fail(ExitCode::launch, fmt::format("cannot run the shim: {}", ssh_get_error(session_)));
  }
  if (ssh_channel_write(channel_, payload.data(), static_cast<uint32_t>(payload.size())) !=
      static_cast<int>(payload.size())) {
    return fail(ExitCode::launch, fmt::format("cannot send the rank's setup: {}", ssh_get_error(session_)));
  }
  return {};
}

Result<void> ShimChannel::ask(const std::string& request) {
  return channel_ == nullptr ? start(request) : send_payload(request);
}

void ShimChannel::send(std::string_view line) {
  if (channel_ != nullptr && !closed_ && ssh_channel_is_open(channel_) != 0) {
    ssh_channel_write(channel_, line.data(), static_cast<uint32_t>(line.size()));
  }
}

void ShimChannel::send_eof() {
  if (channel_ != nullptr && !closed_ && ssh_channel_is_open(channel_) != 0) {
    ssh_channel_send_eof(channel_);
  }
}

void ShimChannel::report_started() {
  if (!started_reported_ && sink_ != nullptr) {
    started_reported_ = true;
    sink_->started(stderr_filter_.pid().value_or(-1));
    if (!held_stdout_.empty()) {
      sink_->output(Stream::out, std::exchange(held_stdout_, {}));
    }
  }
}

int ShimChannel::on_data(ssh_session, ssh_channel, void* data, uint32_t len, int is_stderr, void* self) {
  auto* me = static_cast<ShimChannel*>(self);
  std::string_view bytes(static_cast<const char*>(data), len);
  if (is_stderr != 0) {
    std::string passed = me->stderr_filter_.feed(bytes);
    if (me->stderr_filter_.decided()) {
      me->report_started();
    }
    if (passed.empty()) {
    } else if (me->sink_ != nullptr) {
      me->sink_->output(Stream::err, passed);
    } else {
      me->held_stderr_.append(passed);
    }
  } else if (me->started_reported_) {
    me->sink_->output(Stream::out, bytes);
  } else {
    me->held_stdout_.append(bytes);
  }
  return static_cast<int>(len);
}

void ShimChannel::on_close(ssh_session, ssh_channel, void* self) { static_cast<ShimChannel*>(self)->closed_ = true; }

void ShimChannel::on_exit_status(ssh_session, ssh_channel, int status, void* self) {
  static_cast<ShimChannel*>(self)->exit_status_ = status;
}

void ShimChannel::on_exit_signal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*,
                                 void* self) {
  auto number = signal_number(signal != nullptr ? signal : "");
  static_cast<ShimChannel*>(self)->exit_signal_ = number.value_or(255 - 128);
}

void ShimChannel::finish(const std::optional<std::string>& lost) {
  if (finished_) {
    return;
  }
  finished_ = true;
  if (sink_ == nullptr) {
    return;
  }
  std::string rest = stderr_filter_.flush();
  report_started();
  if (!rest.empty()) {
    sink_->output(Stream::err, rest);
  }
  RankExit how;
  if (exit_signal_ > 0) {
    how.signal = exit_signal_;
    how.code = 128 + exit_signal_;
  } else if (exit_status_) {
    how.code = *exit_status_;
  } else {
    how.code = to_int(ExitCode::launch);
    how.launch_error = lost.value_or("the connection closed without an exit status");
    how.ran = stderr_filter_.pid().has_value();
  }
  sink_->exited(how);
}

} // namespace ddl
