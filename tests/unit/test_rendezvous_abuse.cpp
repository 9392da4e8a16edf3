// SPDX-License-Identifier: MIT
// The rendezvous under abuse (issue 14): idle strangers holding connections,
// and a joined client that pipelines requests without reading the replies.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <future>
#include <thread>

#include "tests/unit/rendezvous_test_util.hpp"

using namespace ddl;
using namespace ddl::rendezvous;
using namespace ddl::rendezvous::testing;

namespace {

// This process's resident set, in KiB (VmRSS of /proc/self/status).
long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word) {
    if (word == "VmRSS:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
  }
  return -1;
}

// A plain TCP connection to 127.0.0.1:port from the source address `from`.
Fd dial_from(const char* from, int port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in source{};
  source.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &source.sin_addr);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&source), sizeof source) != 0 ||
      ::connect(fd.get(), reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
    fd.reset();
  }
  return fd;
}

} // namespace

TEST_CASE("rendezvous: 1000 idle strangers do not lock 4 real ranks out", "[rendezvous][abuse]") {
  ServerOptions options = test_options(4);
  options.handshake_timeout = Millis(3000);  // the default: eviction must do the work
  Server server;
  auto endpoint = server.start(options);
  REQUIRE(endpoint);
  std::vector<std::unique_ptr<RawPeer>> strangers;
  for (int i = 0; i < 1000; ++i) strangers.push_back(std::make_unique<RawPeer>(*endpoint));
  std::this_thread::sleep_for(Millis(100));  // the server has accepted them all
  auto start = Clock::now();
  std::vector<std::future<std::string>> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    ranks.push_back(std::async(std::launch::async, [&, rank]() -> std::string {
      auto client = Client::connect(join_info(*endpoint, rank, 4), Millis(2000));
      if (!client) return client.error().message;
      auto ok = client->barrier(Millis(2000));
      return ok ? "ok" : ok.error().message;
    }));
  }
  for (auto& rank : ranks) CHECK(rank.get() == "ok");
  CHECK(Clock::now() - start < Millis(2000));
  CHECK(server.missing_ranks().empty());
}

TEST_CASE("rendezvous: strangers from one address cannot crowd out another's ranks",
          "[rendezvous][abuse]") {
  ServerOptions options = test_options(2);
  options.spare_connections = 2;
  options.handshake_timeout = Millis(3000);
  Server server;
  auto endpoint = server.start(options);
  REQUIRE(endpoint);
  // Rank 0 (from 127.0.0.1) is halfway through its handshake when strangers
  // from 127.0.0.2 flood in: theirs are the ones dropped, never its.
  RawPeer rank0(*endpoint);
  REQUIRE(rank0.read_hello());
  auto port = net::parse_endpoint(*endpoint)->port;
  std::vector<Fd> strangers;
  for (int i = 0; i < 50; ++i) strangers.push_back(dial_from("127.0.0.2", port));
  std::this_thread::sleep_for(Millis(200));
  rank0.send(FrameWriter(MsgType::join).u32(0).u32(2).bytes("unit")
                 .raw(join_mac(k_token, rank0.nonce, 0, 2, "unit")).finish());
  std::string reply = rank0.frame();
  CHECK(reply.size() == 1);  // OK
  CHECK(server.missing_ranks() == std::vector<int>{1});
}

TEST_CASE("rendezvous: a client that pipelines without reading is dropped, memory bounded",
          "[rendezvous][abuse]") {
  Server server;
  auto endpoint = server.start(test_options(2));
  REQUIRE(endpoint);
  RawPeer greedy(*endpoint);
  REQUIRE(error_text(greedy.join(0, 2)) == "(not an error)");
  greedy.send(FrameWriter(MsgType::set).bytes("big").bytes(std::string(1u << 20, 'x')).finish());
  REQUIRE(greedy.frame().size() == 1);  // OK
  // 1000 GETs of a 1 MiB value: 1 GiB of replies if the server kept them all.
  std::string burst;
  for (int i = 0; i < 1000; ++i) burst += FrameWriter(MsgType::get).bytes("big").u32(0).finish();
  long before = rss_kib();
  greedy.send(burst);
  // It never reads; the server must give up on it rather than queue 1 GiB:
  // rank 0 is then dead in this attempt (its connection closed without LEAVE).
  std::string why;
  auto deadline = Clock::now() + Millis(5000);
  while (Clock::now() < deadline) {
    RawPeer again(*endpoint);
    why = error_text(again.join(0, 2));
    if (why != "rank 0 has already joined") break;
    std::this_thread::sleep_for(Millis(50));
  }
  long grown_kib = rss_kib() - before;
  CHECK(why == "rank 0 has died in this attempt");
  CHECK(grown_kib < 64 * 1024);
  // The server still serves the others.
  auto client = Client::connect(join_info(*endpoint, 1, 2), Millis(2000));
  CHECK(client);
}
