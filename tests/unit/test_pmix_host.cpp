// SPDX-License-Identifier: MIT
// The PMIx host's parts that need no MPI: how ranks' ends decide the host's
// exit code, the fence exchange, the line relay and the server's folder.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "src/pmix/fence_exchange.hpp"
#include "src/pmix/host_outcome.hpp"
#include "src/pmix/line_relay.hpp"
#include "src/pmix/session_dir.hpp"

using namespace ddl::pmix;
using ddl::ProcessExit;

TEST_CASE("HostOutcome: the first failure decides", "[pmix]") {
  HostOutcome outcome(4, 3);  // ranks 4, 5, 6
  SECTION("all finalize and exit 0") {
    for (int rank : {4, 5, 6}) {
      outcome.connected(rank);
      outcome.finalized(rank);
      outcome.exited(rank, ProcessExit{0, 0});
    }
    CHECK(outcome.all_exited());
    CHECK_FALSE(outcome.failing());
    CHECK(outcome.exit_code() == 0);
  }
  SECTION("MPI_Abort's status, then the others' deaths change nothing") {
    outcome.aborted(5, 3, "N/A");
    outcome.exited(5, ProcessExit{3, 0});
    outcome.exited(4, ProcessExit{143, 15});
    CHECK(outcome.failing());
    CHECK(outcome.exit_code() == 3);
    CHECK(outcome.reason() == "rank 5 called MPI_Abort with status 3");
    CHECK_FALSE(outcome.all_exited());
  }
  SECTION("an abort never reads as success") {
    outcome.aborted(4, 0, "bye");
    CHECK(outcome.exit_code() == 1);
    CHECK(outcome.reason() == "rank 4 called MPI_Abort with status 0: bye");
    HostOutcome wrapped(0, 1);
    wrapped.aborted(0, 256, "");
    CHECK(wrapped.exit_code() == 1);
    HostOutcome big(0, 1);
    big.aborted(0, 259, "");
    CHECK(big.exit_code() == 3);
  }
  SECTION("exit 0 without MPI_Finalize once ranks connected") {
    outcome.connected(4);
    outcome.exited(6, ProcessExit{0, 0});
    CHECK(outcome.exit_code() == 1);
    CHECK(outcome.reason() == "rank 6 exited with code 0 without calling MPI_Finalize "
                              "(PMIx_Finalize) while its peers may wait for it");
  }
  SECTION("a program that never uses PMIx may exit 0") {
    for (int rank : {4, 5, 6}) {
      outcome.exited(rank, ProcessExit{0, 0});
    }
    CHECK(outcome.exit_code() == 0);
  }
  SECTION("a code, a signal") {
    outcome.exited(5, ProcessExit{137, 9});
    CHECK(outcome.exit_code() == 137);
    CHECK(outcome.reason() == "rank 5 was killed by SIGKILL");
    HostOutcome coded(0, 1);
    coded.exited(0, ProcessExit{7, 0});
    CHECK(coded.reason() == "rank 0 exited with code 7");
  }
  SECTION("a failure of the host itself") {
    outcome.failed(4, "the PMIx fence across hosts failed: timeout");
    outcome.aborted(4, 3, "");
    CHECK(outcome.exit_code() == 4);
    CHECK(outcome.reason() == "the PMIx fence across hosts failed: timeout");
  }
}

TEST_CASE("FenceExchange", "[pmix]") {
  SECTION("one host: a fence gets its own data back") {
    FenceExchange exchange(nullptr);
    std::promise<ddl::Result<std::string>> got;
    exchange.submit("mine", [&](ddl::Result<std::string> all) { got.set_value(std::move(all)); });
    auto all = got.get_future().get();
    REQUIRE(all);
    CHECK(*all == "mine");
  }
  SECTION("hosts' data concatenated in host order, fences in order") {
    std::vector<std::string> seen;
    FenceExchange exchange([&](const std::string& mine) {
      seen.push_back(mine);
      return ddl::Result<std::vector<std::string>>(std::vector<std::string>{"A" + mine, "B", ""});
    });
    std::promise<std::string> first;
    std::promise<std::string> second;
    exchange.submit("1", [&](ddl::Result<std::string> all) { first.set_value(*all); });
    exchange.submit("2", [&](ddl::Result<std::string> all) { second.set_value(*all); });
    CHECK(first.get_future().get() == "A1B");
    CHECK(second.get_future().get() == "A2B");
    CHECK(seen == std::vector<std::string>{"1", "2"});
  }
  SECTION("the exchange's error reaches the fence") {
    FenceExchange exchange([](const std::string&) -> ddl::Result<std::vector<std::string>> {
      return ddl::fail(ddl::ExitCode::rendezvous_timeout, "rendezvous: allgather timed out");
    });
    std::promise<ddl::Result<std::string>> got;
    exchange.submit("x", [&](ddl::Result<std::string> all) { got.set_value(std::move(all)); });
    auto all = got.get_future().get();
    REQUIRE_FALSE(all);
    CHECK(all.error().code == ddl::ExitCode::rendezvous_timeout);
  }
}

TEST_CASE("LineRelay: whole lines, the rest at the end", "[pmix]") {
  std::array<int, 2> in{};
  std::array<int, 2> out{};
  REQUIRE(::pipe(in.data()) == 0);
  REQUIRE(::pipe2(out.data(), O_NONBLOCK) == 0);
  auto drain = [&] {
    std::string text(4096, '\0');
    ssize_t got = ::read(out[0], text.data(), text.size());
    return got > 0 ? text.substr(0, static_cast<std::size_t>(got)) : std::string();
  };
  {
    LineRelay relay(in[0], out[1]);
    REQUIRE(::write(in[1], "one\ntw", 6) == 6);
    relay.pump();
    CHECK(drain() == "one\n");
    REQUIRE(::write(in[1], "o\nthree", 7) == 7);
    relay.pump();
    CHECK(drain() == "two\n");
    ::close(in[1]);
    relay.pump();  // the end: the rest goes out, the pipe is closed
    CHECK(drain() == "three");
    CHECK(relay.fd() == -1);
  }
  ::close(out[0]);
  ::close(out[1]);
}

TEST_CASE("LineRelay: a prefix before each line, once, also in pieces", "[pmix]") {
  std::array<int, 2> in{};
  std::array<int, 2> out{};
  REQUIRE(::pipe(in.data()) == 0);
  REQUIRE(::pipe2(out.data(), O_NONBLOCK) == 0);
  auto drain = [&] {
    std::string text(4096, '\0');
    ssize_t got = ::read(out[0], text.data(), text.size());
    return got > 0 ? text.substr(0, static_cast<std::size_t>(got)) : std::string();
  };
  {
    LineRelay relay(in[0], out[1], 3);
    REQUIRE(::write(in[1], "one\ntwo\nthr", 11) == 11);
    relay.pump();
    CHECK(drain() == "[3] one\n[3] two\n");
    REQUIRE(::write(in[1], "ee\n\n", 4) == 4);
    relay.pump();
    CHECK(drain() == "[3] three\n[3] \n");
    REQUIRE(::write(in[1], "end", 3) == 3);
    ::close(in[1]);
    relay.pump();
    relay.pump();
    CHECK(drain() == "[3] end\n");  // ended, so that no other rank's line joins it
  }
  ::close(out[0]);
  ::close(out[1]);
}

TEST_CASE("LineRelay: a long line goes out in tagged pieces, each a line", "[pmix]") {
  std::array<int, 2> in{};
  std::array<int, 2> out{};
  REQUIRE(::pipe(in.data()) == 0);
  REQUIRE(::pipe2(out.data(), O_NONBLOCK) == 0);
  REQUIRE(::fcntl(in[1], F_SETFL, O_NONBLOCK) == 0);
  std::string written;
  std::string line = std::string(40000, 'a') + std::string(40000, 'b') + "\n";
  {
    LineRelay relay(in[0], out[1], 3);
    for (std::size_t at = 0; at < line.size();) {
      ssize_t wrote = ::write(in[1], line.data() + at, std::min<std::size_t>(line.size() - at, 16384));
      REQUIRE(wrote > 0);
      at += static_cast<std::size_t>(wrote);
      relay.pump();
      std::string chunk(65536, '\0');
      for (ssize_t got = 0; (got = ::read(out[0], chunk.data(), chunk.size())) > 0;) {
        written.append(chunk, 0, static_cast<std::size_t>(got));
      }
    }
  }
  std::vector<std::string> pieces;
  for (std::size_t at = 0; at < written.size();) {
    std::size_t end = written.find('\n', at);
    REQUIRE(end != std::string::npos);
    pieces.push_back(written.substr(at, end - at));
    at = end + 1;
  }
  // Held up to 32 KiB: one cut piece, then the rest with the line's end.
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0] == "[3+] " + line.substr(0, 32768));
  CHECK(pieces[1] == "[3] " + line.substr(32768, line.size() - 32768 - 1));
  ::close(in[1]);
  ::close(out[0]);
  ::close(out[1]);
}

TEST_CASE("SessionDir: named after the host, unique, removed", "[pmix]") {
  std::string kept = std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "";
  auto base = std::filesystem::temp_directory_path() / ("ddl-unit-pmix-" + std::to_string(::getpid()));
  std::filesystem::create_directories(base);
  ::setenv("TMPDIR", base.c_str(), 1);
  std::string first_path;
  std::string shm_path;
  {
    auto first = SessionDir::create("node a/1");
    auto second = SessionDir::create("node a/1");
    REQUIRE(first);
    REQUIRE(second);
    first_path = first->path();
    CHECK(first->path() != second->path());
    CHECK(first->path().starts_with(base.string() + "/ddl-pmix.node_a_1."));
    CHECK(first->nsdir() == first->path() + "/job");
    CHECK(std::filesystem::is_directory(first->nsdir()));
    std::filesystem::create_directories(first->nsdir() + "/rank0/deep");
    shm_path = first->shm();
    CHECK(shm_path != second->shm());
    CHECK(shm_path.find("/ddl-pmix.node_a_1.") != std::string::npos);
    CHECK(std::filesystem::is_directory(shm_path));
    std::ofstream(shm_path + "/vader_segment.left.by.a.crash") << "x";
  }
  CHECK_FALSE(std::filesystem::exists(first_path));
  CHECK_FALSE(std::filesystem::exists(shm_path));
  CHECK(std::filesystem::is_empty(base));
  if (kept.empty()) {
    ::unsetenv("TMPDIR");
  } else {
    ::setenv("TMPDIR", kept.c_str(), 1);
  }
  std::filesystem::remove_all(base);
}
