// SPDX-License-Identifier: MIT
#include "backends/ssh/frame_session.hpp"

#include <fmt/core.h>

#include "src/util/json.hpp"
#include "src/util/signals.hpp"

namespace ddl {

// One command run by the peer, on one channel id of the session.
class FrameChannel final : public HostChannel {
public:
  enum class State { idle, opening, open, failed, closed };

  FrameChannel(FrameSession& session, std::uint32_t id, ChannelListener& listener)
      : session_(session), id_(id), listener_(&listener) {
    session_.attach(id_, this);
  }
  ~FrameChannel() override {
    session_.detach(id_);
    if (state_ == State::open) {
      session_.send(broker::Type::close, id_);
    }
  }
  FrameChannel(const FrameChannel&) = delete;
  FrameChannel& operator=(const FrameChannel&) = delete;

  Result<void> exec(const std::string& command) override;
  bool write(std::string_view bytes) override {
    return state_ == State::open && session_.send(broker::Type::data, id_, bytes);
  }
  void send_eof() override {
    if (is_open()) {
      session_.send(broker::Type::eof, id_);
    }
  }
  bool is_open() const override { return state_ == State::open && !session_.closed(); }
  void relisten(ChannelListener& listener) override { listener_ = &listener; }
  void hold_output(bool held) override {
    if (session_.mode().holds_output && is_open() && held != held_) {
      held_ = held;
      session_.send(held ? broker::Type::hold : broker::Type::release, id_);
    }
  }
  // A frame about this channel from the peer.
  void receive(const broker::Frame& frame);

private:
  Result<void> await_opened();

  FrameSession& session_;
  std::uint32_t id_;
  ChannelListener* listener_;
  State state_ = State::idle;
  bool held_ = false;
  std::string why_;  // open_failed
};

Result<void> FrameChannel::exec(const std::string& command) {
  bool sent = session_.send(broker::Type::open, id_, command);
  if (session_.mode().exec_waits) {
    state_ = State::opening;
    return await_opened();
  }
  if (!sent) {
    return fail(ExitCode::launch, fmt::format("cannot open a channel: {}", session_.error()));
  }
  state_ = State::open;
  return {};
}

Result<void> FrameChannel::await_opened() {
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
  return fail(ExitCode::launch, fmt::format("cannot open a channel: {}",
                                            session_.closed() ? session_.error() : session_.no_answer()));
}

void FrameChannel::receive(const broker::Frame& frame) {
  if (frame.type == broker::Type::opened) {
    state_ = state_ == State::opening ? State::open : state_;
  } else if (frame.type == broker::Type::open_failed && session_.mode().exec_waits) {
    state_ = State::failed;
    why_ = frame.bytes;
  } else if (frame.type == broker::Type::open_failed) {
    state_ = State::failed;
    listener_->data(fmt::format("{} cannot run the command: {}\n", session_.pipe().name(), frame.bytes), true);
    listener_->ended();
  } else {
    state_ = frame.type == broker::Type::closed ? State::closed : state_;
    broker::tell(*listener_, frame);
  }
}

void FramePipe::deliver(std::string_view bytes) {
  if (session_ != nullptr) {
    session_->received(bytes);
  }
}

FrameSession::FrameSession(std::unique_ptr<FramePipe> pipe, FrameChannelMode mode, Millis answer_timeout)
    : pipe_(std::move(pipe)), mode_(mode), answer_timeout_(answer_timeout) {
  pipe_->deliver_to(*this);
}

FrameSession::~FrameSession() = default;

std::unique_ptr<HostChannel> FrameSession::channel(ChannelListener& listener) {
  return std::make_unique<FrameChannel>(*this, next_id_++, listener);
}

bool FrameSession::send(broker::Type type, std::uint32_t channel, std::string_view bytes) {
  return !closed() && pipe_->send(broker::encode(type, channel, bytes));
}

bool FrameSession::wait_until(const std::function<bool()>& done) {
  poll_until(*this, answer_timeout_, done);
  return done();
}

std::string FrameSession::no_answer() const {
  return fmt::format("{} did not answer within {:g}s", pipe_->name(),
                     static_cast<double>(answer_timeout_.count()) / 1000.0);
}

Result<void> FrameSession::greet(const std::optional<std::string>& hello, std::string_view doing) {
  if (hello) {
    send(broker::Type::hello, 0, *hello);
  }
  wait_until([this] { return answer_.has_value(); });
  if (answer_ && answer_->type == broker::Type::ready) {
    Json said = Json::parse(answer_->bytes, nullptr, false);
    if (said.is_object() && said.contains("version") && said["version"] == broker::k_protocol) {
      return {};
    }
    return fail(ExitCode::launch, fmt::format("{} speaks {}, this ddl speaks frame protocol version {}",
                                              pipe_->name(), answer_->bytes, broker::k_protocol));
  }
  if (answer_ && !answer_->bytes.empty()) {
    return fail(ExitCode::launch, answer_->bytes);  // refused: why
  }
  if (stop::requested()) {
    return fail(stop::error(doing));
  }
  return fail(ExitCode::launch, closed() ? error() : no_answer());
}

void FrameSession::received(std::string_view bytes) {
  if (lost_) {
    return;
  }
  reader_.feed(bytes);
  while (auto frame = reader_.next()) {
    dispatch(*frame);
  }
  if (reader_.bad()) {
    pipe_->malformed();
  }
}

void FrameSession::dispatch(const broker::Frame& frame) {
  if (frame.type == broker::Type::lost) {
    lost_ = lost_.value_or(frame.bytes);
  } else if (frame.channel == 0) {
    if (!answer_ && (frame.type == broker::Type::ready || frame.type == broker::Type::refused)) {
      answer_ = frame;
    }
  } else if (auto found = channels_.find(frame.channel); found != channels_.end()) {
    found->second->receive(frame);
  }
}

} // namespace ddl
