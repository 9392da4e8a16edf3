// SPDX-License-Identifier: MIT
// The one framed session of ddl's relay and the sweep's broker
// (backends/ssh/frame_session.hpp) over a pipe that only moves bytes: its
// greeting carries the one frame protocol version (another is an error
// naming both), and a channel's frames go out and come back to its listener.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/ssh/frame_session.hpp"

using namespace ddl;
using broker::Type;

namespace {

class FakePipe final : public FramePipe {
public:
  bool send(std::string_view bytes) override {
    sent.feed(bytes);
    return true;
  }
  void add_to(ssh_event) override {}
  void remove_from(ssh_event) override {}
  bool ended() const override { return false; }
  std::string error() const override { return ""; }
  void malformed() override {}
  std::string name() const override { return "the fake peer"; }
  void peer_says(Type type, std::uint32_t channel, std::string_view bytes = {}) {
    deliver(broker::encode(type, channel, bytes));
  }
  broker::FrameReader sent;
};

struct Heard final : ChannelListener {
  void data(std::string_view bytes, bool is_stderr) override { (is_stderr ? err : out) += bytes; }
  void exit_status(int code) override { status = code; }
  void exit_signal(std::string_view name) override { signal = std::string(name); }
  void ended() override { done = true; }
  std::string out, err, signal;
  std::optional<int> status;
  bool done = false;
};

struct Session {
  explicit Session(FrameChannelMode mode) {
    auto owned = std::make_unique<FakePipe>();
    pipe = owned.get();
    session = std::make_unique<FrameSession>(std::move(owned), mode, Millis{100});
  }
  FakePipe* pipe;
  std::unique_ptr<FrameSession> session;
};

} // namespace

TEST_CASE("frame session: the greeting carries the one frame protocol version", "[broker][relay][contract]") {
  REQUIRE(broker::k_protocol == 1);
  REQUIRE(broker::ready_bytes() == "{\"version\":1}");
  Session same({});
  same.pipe->peer_says(Type::ready, 0, broker::ready_bytes());
  CHECK(same.session->greet(std::nullopt, "greeting"));

  Session other({});
  other.pipe->peer_says(Type::ready, 0, "{\"version\":2}");
  auto refused = other.session->greet(std::nullopt, "greeting");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "the fake peer speaks {\"version\":2}, this ddl speaks frame protocol version 1");

  Session broker_said_no({.exec_waits = true, .holds_output = false});
  broker_said_no.pipe->peer_says(Type::refused, 0, "h1: connection refused");
  auto why = broker_said_no.session->greet(std::string("{\"version\":1}"), "connecting");
  REQUIRE_FALSE(why);
  CHECK(why.error().message == "h1: connection refused");
  auto hello = broker_said_no.pipe->sent.next();
  REQUIRE(hello);
  CHECK((hello->type == Type::hello && hello->channel == 0 && hello->bytes == "{\"version\":1}"));
}

TEST_CASE("frame session: a channel's frames go out, and what comes back reaches its listener",
          "[broker][relay][contract]") {
  Session relay({.exec_waits = false, .holds_output = true});
  Heard heard;
  auto channel = relay.session->channel(heard);
  REQUIRE(channel->exec("echo hi"));  // the relay's: no round trip
  CHECK(channel->write("input"));
  channel->hold_output(true);
  channel->send_eof();
  std::vector<broker::Frame> sent;
  while (auto frame = relay.pipe->sent.next()) sent.push_back(*frame);
  REQUIRE(sent.size() == 4);
  CHECK((sent[0].type == Type::open && sent[0].channel == 1 && sent[0].bytes == "echo hi"));
  CHECK((sent[1].type == Type::data && sent[1].bytes == "input"));
  CHECK(sent[2].type == Type::hold);
  CHECK(sent[3].type == Type::eof);

  relay.pipe->peer_says(Type::out, 1, "hi\n");
  relay.pipe->peer_says(Type::err, 1, "warn\n");
  relay.pipe->peer_says(Type::exit_status, 1, "3");
  relay.pipe->peer_says(Type::closed, 1);
  CHECK((heard.out == "hi\n" && heard.err == "warn\n" && heard.status == 3 && heard.done));
  CHECK_FALSE(channel->is_open());

  Heard failed;
  auto refused = relay.session->channel(failed);
  REQUIRE(refused->exec("nope"));
  relay.pipe->peer_says(Type::open_failed, 2, "cannot start /bin/sh");
  CHECK((failed.err == "the fake peer cannot run the command: cannot start /bin/sh\n" && failed.done));
}

TEST_CASE("frame session: the broker's lost frame closes the session with its reason", "[broker][contract]") {
  Session trial({.exec_waits = true, .holds_output = false});
  trial.pipe->peer_says(Type::lost, 0, "h1: host not answering");
  CHECK(trial.session->closed());
  CHECK(trial.session->error() == "h1: host not answering");
}
