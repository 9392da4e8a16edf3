// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <chrono>
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
