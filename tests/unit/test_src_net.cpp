// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <string>

#include "src/util/net.hpp"

using namespace ddl;

namespace {

auto soon(int ms = 2000) { return net::Clock::now() + std::chrono::milliseconds(ms); }

} // namespace

TEST_CASE("net: listen, dial, accept, send and receive", "[net]") {
  auto listener = net::listen_tcp("127.0.0.1", 0, 4);
  REQUIRE(listener);
  int port = net::local_port(listener->get());
  CHECK(net::local_address(listener->get()) == "127.0.0.1");
  auto dialed = net::dial_tcp("127.0.0.1", port, soon());
  REQUIRE(dialed);
  net::Fd accepted;
  REQUIRE(net::accept_one(listener->get(), accepted, soon()));

  SECTION("bytes arrive whole") {
    REQUIRE(net::send_all(dialed->get(), "hello", soon()));
    std::string got(5, '\0');
    REQUIRE(net::recv_exact(accepted.get(), got.data(), got.size(), soon()));
    CHECK(got == "hello");
  }
  SECTION("a blocking socket too stops at the deadline") {
    char byte = 0;
    auto status = net::recv_exact(accepted.get(), &byte, 1, soon(50));
    CHECK(status.end == net::IoEnd::timed_out);
  }
  SECTION("a closed peer reads as closed") {
    dialed->reset();
    char byte = 0;
    CHECK(net::recv_exact(accepted.get(), &byte, 1, soon()).end == net::IoEnd::closed);
  }
}

TEST_CASE("net: errors use the caller's wording", "[net]") {
  auto taken = net::listen_tcp("127.0.0.1", 0, 1);
  REQUIRE(taken);
  int port = net::local_port(taken->get());
  auto again = net::listen_tcp("127.0.0.1", port, 1, {"ring: ", ""});
  REQUIRE_FALSE(again);
  CHECK(again.error().message ==
        "ring: cannot listen on 127.0.0.1:" + std::to_string(port) + ": Address already in use");
  taken->reset();
  auto refused = net::dial_tcp("127.0.0.1", port, soon(100));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "cannot connect to 127.0.0.1:" + std::to_string(port) + ": Connection refused");
}

TEST_CASE("net: route_to", "[net]") {
  CHECK(net::route_to("127.0.0.1").address == "127.0.0.1");
  CHECK(net::route_to("no-such-host.invalid").end == net::RouteEnd::unresolved);
  CHECK(net::is_loopback("localhost"));
  CHECK(net::is_loopback("[::1]"));
  CHECK_FALSE(net::is_loopback("192.0.2.1"));
}

TEST_CASE("net: is_this_machine", "[net]") {
  CHECK(net::is_this_machine("localhost"));
  CHECK(net::is_this_machine("127.0.0.1"));
  CHECK(net::is_this_machine("127.0.1.1"));  // Debian's entry for the host name
  CHECK(net::is_this_machine("[::1]"));
  CHECK_FALSE(net::is_this_machine("192.0.2.1"));  // TEST-NET-1: never an interface here
  CHECK_FALSE(net::is_this_machine("nosuch.invalid"));
}

TEST_CASE("net: ports_in_proc_net_tcp reads the local ports of every socket but TIME_WAIT", "[net]") {
  const std::string text =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n"
      "   1: 00000000:7338 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 2\n"
      "   2: 0100007F:7339 0100007F:A1B3 06 00000000:00000000 00:00000000 00000000     0        0 0\n"
      "  sl  local_address                         remote_address                        st\n"
      "   0: 00000000000000000000000000000000:1F91 00000000000000000000000000000000:0000 0A\n";
  CHECK(net::ports_in_proc_net_tcp(text) == std::set<int>{0x1F90, 0x7338, 0x1F91});
  CHECK(net::ports_in_proc_net_tcp("").empty());
}

TEST_CASE("net: pick_unused_ports avoids every used port of the run", "[net]") {
  std::set<int> used;
  for (int port = 20000; port <= 32767; ++port) {
    if (port != 31000 && port != 31001) {
      used.insert(port);
    }
  }
  CHECK(net::pick_unused_ports(used, 2) == 31000);
  CHECK(net::pick_unused_ports(used, 1) >= 31000);
  used.insert(31001);
  CHECK(net::pick_unused_ports(used, 2) == 0);
  const int any = net::pick_unused_ports({}, 2);
  CHECK((any >= 20000 && any + 1 <= 32767));
}

TEST_CASE("net: free_ports_here finds a free run and refuses a taken port", "[net]") {
  auto port = net::free_ports_here(0, 2);
  REQUIRE(port);
  CHECK(net::free_ports_here(*port, 2));
  auto taken = net::listen_tcp("127.0.0.1", 0, 1);
  REQUIRE(taken);
  const int busy = net::local_port(taken->get());
  auto refused = net::free_ports_here(busy, 1);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ExitCode::launch);
  CHECK(refused.error().message.find("port " + std::to_string(busy) + " is already in use on this machine") == 0);
}
