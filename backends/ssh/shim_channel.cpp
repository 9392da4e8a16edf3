// SPDX-License-Identifier: MIT
#include "backends/ssh/shim_channel.hpp"

#include <fmt/core.h>

#include "src/util/signal_names.hpp"

namespace ddl {

ShimChannel::ShimChannel(HostSession& session, Sink* sink) : session_(session), sink_(sink) {}

ShimChannel::~ShimChannel() = default;

void ShimChannel::attach(Sink& sink) {
  sink_ = &sink;
  if (stderr_filter_.decided()) {
    report_started();
  }
  if (!held_stderr_.empty()) {
    sink_->output(Stream::err, std::exchange(held_stderr_, {}));
  }
}

std::unique_ptr<HostChannel> ShimChannel::hand_over(ChannelListener& listener) {
  if (channel_) {
    channel_->relisten(listener);
  }
  closed_ = true;
  return std::move(channel_);
}

Result<void> ShimChannel::send_payload(const std::string& payload) {
  if (!channel_ || closed_ || !channel_->write(payload)) {
    return fail(ExitCode::launch, fmt::format("cannot send the rank's setup: {}", session_.error()));
  }
  return {};
}

Result<void> ShimChannel::start(const std::string& payload) {
  channel_ = session_.channel(*this);
  if (auto opened = channel_->exec(shim_ssh_command()); !opened) {
    return opened;
  }
  if (!channel_->write(payload)) {
    return fail(ExitCode::launch, fmt::format("cannot send the rank's setup: {}", session_.error()));
  }
  return {};
}

Result<void> ShimChannel::ask(const std::string& request) {
  return !channel_ ? start(request) : send_payload(request);
}

void ShimChannel::send(std::string_view line) {
  if (channel_ && !closed_ && channel_->is_open()) {
    channel_->write(line);
  }
}

void ShimChannel::send_eof() {
  if (channel_ && !closed_ && channel_->is_open()) {
    channel_->send_eof();
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

void ShimChannel::data(std::string_view bytes, bool is_stderr) {
  if (is_stderr) {
    std::string passed = stderr_filter_.feed(bytes);
    if (stderr_filter_.decided()) {
      report_started();
    }
    if (passed.empty()) {
    } else if (sink_ != nullptr) {
      sink_->output(Stream::err, passed);
    } else {
      held_stderr_.append(passed);
    }
  } else if (started_reported_) {
    sink_->output(Stream::out, bytes);
  } else {
    held_stdout_.append(bytes);
  }
}

void ShimChannel::exit_signal(std::string_view name) {
  auto number = signal_number(name);
  exit_signal_ = number.value_or(255 - 128);
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
