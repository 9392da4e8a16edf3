// SPDX-License-Identifier: MIT
// ddl's relay (backends/ssh/relay_server.hpp), run in a child process with
// pipes for its stdin and stdout, as sshd gives it the shim's channel: what
// each command does comes back as frames in order, a background process
// holding a command's output does not hold its channel, and the relay ends
// with its input or its silence.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/ssh/broker_wire.hpp"
#include "backends/ssh/relay_server.hpp"

using namespace std::chrono_literals;
using ddl::broker::Frame;
using ddl::broker::Type;

namespace {

class RelayProcess {
public:
  explicit RelayProcess(ddl::Millis idle = ddl::k_relay_idle) {
    int in[2];
    int out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
      ::_exit(ddl::run_ssh_relay(idle));
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~RelayProcess() {
    close_input();
    if (from_ >= 0) ::close(from_);
    if (!status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void send(Type type, std::uint32_t channel, std::string_view bytes = {}) {
    std::string frame = ddl::broker::encode(type, channel, bytes);
    REQUIRE(::write(to_, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size()));
  }
  void close_input() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
  }
  // The next frame, or nullopt when none comes within `limit` (or EOF).
  std::optional<Frame> next(std::chrono::milliseconds limit = 5s) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (true) {
      if (auto frame = reader_.next()) return frame;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      pollfd ready{from_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char buffer[4096];
      ssize_t got = ::read(from_, buffer, sizeof buffer);
      if (got <= 0) return std::nullopt;
      reader_.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  }
  // Frames of `channel` up to and with its `closed`, the others dropped.
  std::vector<Frame> until_closed(std::uint32_t channel) {
    std::vector<Frame> frames;
    while (auto frame = next()) {
      if (frame->channel != channel) continue;
      frames.push_back(*frame);
      if (frame->type == Type::closed) break;
    }
    return frames;
  }
  // The relay's exit status once it ended within `limit`.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (!status_ && std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
      else std::this_thread::sleep_for(20ms);
    }
    return status_;
  }

private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  ddl::broker::FrameReader reader_;
  std::optional<int> status_;
};

std::string joined(const std::vector<Frame>& frames, Type type) {
  std::string text;
  for (const auto& frame : frames) {
    if (frame.type == type) text += frame.bytes;
  }
  return text;
}

} // namespace

TEST_CASE("relay: greets, then a command's output, input, exit status and end, in order", "[relay]") {
  RelayProcess relay;
  auto hello = relay.next();
  REQUIRE(hello);
  CHECK((hello->type == Type::ready && hello->channel == 0 && hello->bytes == "{\"version\":1}"));
  relay.send(Type::open, 3, "read x; echo \"got $x\"; echo oops >&2; exit 5");
  relay.send(Type::data, 3, "hello\n");
  auto frames = relay.until_closed(3);
  REQUIRE(frames.size() >= 4);
  CHECK(frames.front().type == Type::opened);
  CHECK(joined(frames, Type::out) == "got hello\n");
  CHECK(joined(frames, Type::err) == "oops\n");
  REQUIRE(frames[frames.size() - 2].type == Type::exit_status);
  CHECK(frames[frames.size() - 2].bytes == "5");
  CHECK(frames.back().type == Type::closed);
}

TEST_CASE("relay: a command killed by a signal ends with its name; commands run side by side", "[relay]") {
  RelayProcess relay;
  REQUIRE(relay.next());
  relay.send(Type::open, 1, "cat");
  relay.send(Type::open, 2, "kill -TERM $$");
  auto killed = relay.until_closed(2);
  REQUIRE(killed.size() >= 2);
  CHECK(killed[killed.size() - 2].type == Type::exit_signal);
  CHECK(killed[killed.size() - 2].bytes == "TERM");
  relay.send(Type::data, 1, "still here\n");
  relay.send(Type::eof, 1);
  auto cat = relay.until_closed(1);
  CHECK(joined(cat, Type::out) == "still here\n");
  REQUIRE(cat.size() >= 2);
  CHECK(cat[cat.size() - 2].bytes == "0");
}

TEST_CASE("relay: a background process holding the output does not hold the channel", "[relay]") {
  RelayProcess relay;
  REQUIRE(relay.next());
  auto start = std::chrono::steady_clock::now();
  relay.send(Type::open, 1, "sleep 7.5 & echo $!");
  auto frames = relay.until_closed(1);
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(!frames.empty());
  CHECK(frames.back().type == Type::closed);
  CHECK(took < ddl::k_relay_drain + 2s);
  std::string pid = joined(frames, Type::out);
  REQUIRE(!pid.empty());
  ::kill(std::stoi(pid), SIGKILL);
}

TEST_CASE("relay: the end of its input closes every command's input; it exits once they end", "[relay]") {
  RelayProcess relay;
  REQUIRE(relay.next());
  relay.send(Type::open, 1, "cat >/dev/null; echo after-eof");
  relay.send(Type::open, 2, "cat >/dev/null; exit 3");
  REQUIRE(relay.next());  // opened
  relay.close_input();
  std::string out;
  int closed = 0;
  while (auto frame = relay.next()) {
    out += frame->type == Type::out ? frame->bytes : "";
    closed += frame->type == Type::closed ? 1 : 0;
  }
  CHECK(out == "after-eof\n");
  CHECK(closed == 2);
  auto status = relay.wait(5s);
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
}

TEST_CASE("relay: silence without commands ends it; a beat keeps it", "[relay]") {
  RelayProcess relay(400ms);
  REQUIRE(relay.next());
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(150ms);
    relay.send(Type::data, 0);  // a beat
  }
  CHECK_FALSE(relay.wait(0ms));
  auto status = relay.wait(3s);
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
}
