// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "tests/unit/rendezvous_test_util.hpp"

using namespace ddl;
using namespace ddl::rendezvous;
using namespace ddl::rendezvous::testing;

namespace {

// Runs `body(rank)` on one thread per rank and returns their results.
template <typename Body> auto on_every_rank(int world_size, Body body) {
  using R = decltype(body(0));
  std::vector<std::future<R>> futures;
  for (int rank = 0; rank < world_size; ++rank) {
    futures.push_back(std::async(std::launch::async, body, rank));
  }
  std::vector<R> results;
  for (auto& future : futures) results.push_back(future.get());
  return results;
}

} // namespace

TEST_CASE("rendezvous: ranks join, barrier, set/get and allgather", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(4));
  REQUIRE(endpoint);
  CHECK(endpoint->starts_with("127.0.0.1:"));
  CHECK_FALSE(endpoint->ends_with(":0"));
  CHECK(server.missing_ranks() == std::vector<int>{0, 1, 2, 3});
  CHECK_FALSE(server.first_join());

  auto results = on_every_rank(4, [&](int rank) -> std::string {
    auto client = Client::connect(join_info(*endpoint, rank, 4), Millis(3000));
    if (!client) return "connect: " + client.error().message;
    if (auto ok = client->barrier(Millis(3000)); !ok) return "barrier: " + ok.error().message;
    if (rank == 0) (void)client->set("id", "unique-id-42");
    auto id = client->get("id", Millis(3000));
    if (!id) return "get: " + id.error().message;
    auto all = client->allgather("addr" + std::to_string(rank), Millis(3000));
    if (!all) return "allgather: " + all.error().message;
    std::string seen = *id;
    for (const auto& part : *all) seen += "," + part;
    if (rank == 3) (void)client->set("result", "rank 3 says hi");
    (void)client->barrier(Millis(3000));
    return seen;
  });
  for (const auto& seen : results) CHECK(seen == "unique-id-42,addr0,addr1,addr2,addr3");
  CHECK(server.missing_ranks().empty());
  CHECK(server.first_join());
  CHECK(server.value("result") == "rank 3 says hi");
  CHECK_FALSE(server.value("absent"));
}

TEST_CASE("rendezvous: a wrong token is refused and changes nothing", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(2));
  REQUIRE(endpoint);
  JoinInfo impostor = join_info(*endpoint, 0, 2);
  impostor.token = std::string(64, 'b');
  auto refused = Client::connect(impostor, Millis(2000));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "rendezvous: authentication failed (wrong DDL_TOKEN?)");
  CHECK(refused.error().message.find(impostor.token) == std::string::npos);
  CHECK(server.missing_ranks() == std::vector<int>{0, 1});
  CHECK_FALSE(server.first_join());
  auto results = on_every_rank(2, [&](int rank) {
    auto client = Client::connect(join_info(*endpoint, rank, 2), Millis(2000));
    return client && client->barrier(Millis(2000)).has_value();
  });
  CHECK(results == std::vector<bool>{true, true});
}

TEST_CASE("rendezvous: bad joins are refused, state intact", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(4));
  REQUIRE(endpoint);
  auto first = Client::connect(join_info(*endpoint, 1, 4), Millis(2000));
  REQUIRE(first);

  auto duplicate = Client::connect(join_info(*endpoint, 1, 4), Millis(2000));
  REQUIRE_FALSE(duplicate);
  CHECK(duplicate.error().message == "rendezvous: rank 1 has already joined");
  auto out_of_range = Client::connect(join_info(*endpoint, 4, 4), Millis(2000));
  REQUIRE_FALSE(out_of_range);
  CHECK(out_of_range.error().message == "rendezvous: rank 4 is out of range for world size 4");
  auto wrong_world = Client::connect(join_info(*endpoint, 2, 3), Millis(2000));
  REQUIRE_FALSE(wrong_world);
  CHECK(wrong_world.error().message == "rendezvous: world size 3 does not match the job's 4");
  JoinInfo wrong_job = join_info(*endpoint, 2, 4);
  wrong_job.job = "other";
  auto refused_job = Client::connect(wrong_job, Millis(2000));
  REQUIRE_FALSE(refused_job);
  CHECK(refused_job.error().message == "rendezvous: job 'other' does not match this rendezvous");

  CHECK(server.missing_ranks() == std::vector<int>{0, 2, 3});
  // The first rank 1 is still in good standing.
  REQUIRE(first->set("k", "v"));
  CHECK(first->get("k", Millis(1000)).value_or("") == "v");
}

TEST_CASE("rendezvous: garbage and huge frames get an error, others unaffected", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(2));
  REQUIRE(endpoint);
  auto good = Client::connect(join_info(*endpoint, 0, 2), Millis(2000));
  REQUIRE(good);

  RawPeer http(*endpoint);
  REQUIRE(http.read_hello());
  http.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(error_text(http.frame()) == "frame of 1195725856 bytes: must be 1 to 4096 bytes");
  CHECK(http.closed_within(2000));

  RawPeer huge(*endpoint);
  REQUIRE(huge.read_hello());
  huge.send(std::string("\xff\xff\xff\xff", 4) + std::string(1000, 'x'));
  CHECK(error_text(huge.frame()) == "frame of 4294967295 bytes: must be 1 to 4096 bytes");
  CHECK(huge.closed_within(2000));

  RawPeer wrong_type(*endpoint);
  REQUIRE(wrong_type.read_hello());
  wrong_type.send(FrameWriter(MsgType::barrier).finish());
  CHECK(error_text(wrong_type.frame()) == "expected a JOIN or HEARTBEAT frame");

  CHECK(server.missing_ranks() == std::vector<int>{1});
  auto second = Client::connect(join_info(*endpoint, 1, 2), Millis(2000));
  REQUIRE(second);
  auto barrier = std::async(std::launch::async, [&] { return good->barrier(Millis(2000)); });
  CHECK(second->barrier(Millis(2000)));
  CHECK(barrier.get());
}

TEST_CASE("rendezvous: a joined worker's oversized message ends only its own connection",
          "[rendezvous]") {
  ServerOptions options = test_options(2);
  options.max_message = 1024;
  Server server;
  auto endpoint = server.start(options);
  REQUIRE(endpoint);
  auto good = Client::connect(join_info(*endpoint, 0, 2), Millis(2000));
  REQUIRE(good);
  RawPeer big(*endpoint);
  REQUIRE(error_text(big.join(1, 2)) == "(not an error)");
  big.send(FrameWriter(MsgType::set).bytes("k").bytes(std::string(2000, 'v')).finish());
  CHECK(error_text(big.frame()) == "frame of 2010 bytes: must be 1 to 1024 bytes");
  CHECK(big.closed_within(2000));
  REQUIRE(good->set("still", "fine"));
  CHECK(good->get("still", Millis(1000)).value_or("") == "fine");
}

TEST_CASE("rendezvous: a silent connection is dropped at the handshake deadline",
          "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(1));
  REQUIRE(endpoint);
  RawPeer silent(*endpoint);
  REQUIRE(silent.read_hello());
  auto before = Clock::now();
  CHECK(silent.closed_within(3000));
  CHECK(Clock::now() - before < Millis(2000));
  auto client = Client::connect(join_info(*endpoint, 0, 1), Millis(2000));
  REQUIRE(client);
  CHECK(client->barrier(Millis(1000)));
}

TEST_CASE("rendezvous: beyond the cap, the oldest connection not yet joined is dropped", "[rendezvous]") {
  ServerOptions options = test_options(1);
  options.spare_connections = 1;
  Server server;
  auto endpoint = server.start(options);
  REQUIRE(endpoint);
  RawPeer a(*endpoint);
  RawPeer b(*endpoint);
  REQUIRE(a.read_hello());
  REQUIRE(b.read_hello());
  RawPeer c(*endpoint);
  CHECK(c.read_hello());
  CHECK(a.closed_within(1000));
  CHECK(error_text(c.join(0, 1)) == "(not an error)");
}

TEST_CASE("rendezvous: a worker that dies is noticed at once, named", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(3));
  REQUIRE(endpoint);
  auto waiting = on_every_rank(2, [&](int rank) -> std::string {
    auto client = Client::connect(join_info(*endpoint, rank, 3), Millis(2000));
    if (!client) return client.error().message;
    if (rank == 0) {
      auto got = client->get("never", Millis(10'000));
      return got ? "got a value" : got.error().message;
    }
    auto start = Clock::now();
    RawPeer doomed(*endpoint);
    if (!error_text(doomed.join(2, 3)).starts_with("(not")) return "raw join failed";
    auto killer = std::thread([&] {
      std::this_thread::sleep_for(Millis(200));
      doomed.fd.reset();  // dies: EOF without LEAVE
    });
    auto barrier = client->barrier(Millis(10'000));
    killer.join();
    if (Clock::now() - start > Millis(5000)) return "too slow";
    return barrier ? "barrier passed" : barrier.error().message;
  });
  CHECK(waiting[0] == "rendezvous: get 'never' failed: rank 2 died (its connection closed without LEAVE)");
  CHECK(waiting[1] == "rendezvous: barrier failed: rank 2 died (its connection closed without LEAVE)");
}

TEST_CASE("rendezvous: get times out with the key named", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(1));
  REQUIRE(endpoint);
  auto client = Client::connect(join_info(*endpoint, 0, 1), Millis(2000));
  REQUIRE(client);
  auto got = client->get("missing", Millis(200));
  REQUIRE_FALSE(got);
  CHECK(got.error().code == ExitCode::rendezvous_timeout);
  CHECK(got.error().message == "rendezvous: timed out after 200ms waiting for key 'missing'");
  CHECK(client->barrier(Millis(1000)));
}

TEST_CASE("rendezvous: busy port names addr:port; reset starts a new attempt", "[rendezvous]") {
  Server first;
  auto endpoint = first.start(test_options(1));
  REQUIRE(endpoint);
  auto port = net::parse_endpoint(*endpoint)->port;
  ServerOptions same = test_options(1);
  same.port = port;
  Server second;
  auto busy = second.start(same);
  REQUIRE_FALSE(busy);
  CHECK(busy.error().message ==
        "rendezvous: cannot listen on 127.0.0.1:" + std::to_string(port) + ": Address already in use");

  {
    auto client = Client::connect(join_info(*endpoint, 0, 1), Millis(2000));
    REQUIRE(client);
    REQUIRE(client->set("attempt", "0"));
  }
  first.reset();
  CHECK(first.missing_ranks() == std::vector<int>{0});
  CHECK_FALSE(first.value("attempt"));
  auto again = Client::connect(join_info(*endpoint, 0, 1), Millis(2000));
  CHECK(again);
}

TEST_CASE("rendezvous: the exit-4 rule and its message", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(3));
  REQUIRE(endpoint);
  CHECK(server.overdue_ranks(Millis(0)).empty());  // nobody joined: not started
  auto client = Client::connect(join_info(*endpoint, 1, 3), Millis(2000));
  REQUIRE(client);
  CHECK(server.overdue_ranks(Millis(60'000)).empty());
  std::this_thread::sleep_for(Millis(20));
  CHECK(server.overdue_ranks(Millis(10)) == std::vector<int>{0, 2});
  CHECK(overdue_message(Millis(300'000), {0, 2}) ==
        "rendezvous timed out after 5m: ranks 0, 2 never joined");
  CHECK(overdue_message(Millis(1500), {5}) == "rendezvous timed out after 1.5s: rank 5 never joined");
  CHECK(overdue_message(Millis(90'000), {1}) == "rendezvous timed out after 1m30s: rank 1 never joined");
}

TEST_CASE("rendezvous: a rank that left blocks collectives until it joins again", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(2));
  REQUIRE(endpoint);
  auto rank0 = Client::connect(join_info(*endpoint, 0, 2), Millis(2000));
  REQUIRE(rank0);
  {
    auto rank1 = Client::connect(join_info(*endpoint, 1, 2), Millis(2000));
    REQUIRE(rank1);
  }  // leaves cleanly
  auto blocked = rank0->barrier(Millis(2000));
  REQUIRE_FALSE(blocked);
  CHECK(blocked.error().message == "rendezvous: barrier failed: rank 1 has left");
  auto again = Client::connect(join_info(*endpoint, 1, 2), Millis(2000));
  REQUIRE(again);
  auto results = on_every_rank(2, [&](int rank) -> std::string {
    auto done = (rank == 0 ? *rank0 : *again).barrier(Millis(3000));
    return done ? "ok" : done.error().message;
  });
  CHECK(results == std::vector<std::string>{"ok", "ok"});
}

TEST_CASE("rendezvous: a BARRIER sent right behind JOIN gets both OKs, together", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(2));
  REQUIRE(endpoint);
  RawPeer rank0(*endpoint);
  REQUIRE(rank0.read_hello());
  rank0.send(rank0.join_frame(0, 2) + FrameWriter(MsgType::barrier).finish());
  // The join's OK waits for the barrier's: the client reads neither before.
  CHECK(rank0.frame(300).empty());
  REQUIRE(rank0.fd);
  auto rank1 = Client::connect(join_info(*endpoint, 1, 2), Millis(2000));
  REQUIRE(rank1);
  CHECK(rank1->barrier(Millis(2000)));
  CHECK(FrameReader(rank0.frame()).type() == MsgType::ok);
  CHECK(FrameReader(rank0.frame()).type() == MsgType::ok);
}

TEST_CASE("rendezvous: a refused JOIN's pipelined request is never handled", "[rendezvous]") {
  Server server;
  auto endpoint = server.start(test_options(2));
  REQUIRE(endpoint);
  RawPeer impostor(*endpoint);
  REQUIRE(impostor.read_hello());
  impostor.send(impostor.join_frame(0, 2, std::string(64, 'b')) +
                FrameWriter(MsgType::set).bytes("k").bytes("v").finish());
  CHECK(error_text(impostor.frame()) == "authentication failed (wrong DDL_TOKEN?)");
  CHECK(impostor.closed_within(2000));
  CHECK(server.missing_ranks() == std::vector<int>{0, 1});
  CHECK_FALSE(server.value("k"));
}
