// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "rendezvous/protocol.hpp"
#include "rendezvous/sha256.hpp"

using namespace ddl::rendezvous;

static std::string hex(const Digest& digest) { return to_hex(as_bytes(digest)); }

TEST_CASE("sha256 matches the FIPS 180 examples", "[rendezvous]") {
  CHECK(hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.update(chunk);
  CHECK(hex(million.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("hmac_sha256 matches RFC 4231", "[rendezvous]") {
  CHECK(hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hex(hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  CHECK(hex(hmac_sha256(std::string(131, '\xaa'),
                        "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("constant_time_equal", "[rendezvous]") {
  CHECK(constant_time_equal("abc", "abc"));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "ab"));
}

TEST_CASE("tokens are 64 fresh hex digits", "[rendezvous]") {
  auto a = generate_token();
  auto b = generate_token();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->size() == 64);
  CHECK(a->find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(*a != *b);
}

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
