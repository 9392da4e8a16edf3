// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "rendezvous/protocol.hpp"

using namespace ddl::rendezvous;

TEST_CASE("frames and endpoints", "[rendezvous]") {
  std::string frame = FrameWriter(MsgType::set).bytes("k").bytes("v").finish();
  REQUIRE(frame.size() == 4 + 1 + 5 + 5);
  CHECK(read_be32(frame.data()) == 11);
  FrameReader reader(std::string_view(frame).substr(4));
  CHECK(reader.type() == MsgType::set);
  CHECK(reader.bytes() == "k");
  CHECK(reader.bytes() == "v");
  CHECK(reader.at_end());
  CHECK_FALSE(reader.u32());

  auto v4 = ddl::net::parse_endpoint("127.0.0.1:29400");
  REQUIRE(v4);
  CHECK(v4->host == "127.0.0.1");
  CHECK(v4->port == 29400);
  auto v6 = ddl::net::parse_endpoint("[::1]:80");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(ddl::net::format_endpoint("::1", 80) == "[::1]:80");
  CHECK_FALSE(ddl::net::parse_endpoint("host"));
  CHECK_FALSE(ddl::net::parse_endpoint("host:0"));
  CHECK_FALSE(ddl::net::parse_endpoint(":80"));
}
