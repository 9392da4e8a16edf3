// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "rendezvous/crypto.hpp"
#include "rendezvous/protocol.hpp"

using namespace ddl::rendezvous;

namespace {

std::string hmac_hex(std::string_view key, std::string_view message) {
  return to_hex(hmac_sha256(key, message));
}

// 0x01, 0x02, ..., 0x19: the key of RFC 4231's test case 4.
std::string counting_key() {
  std::string key;
  for (char byte = 1; byte <= 25; ++byte) {
    key += byte;
  }
  return key;
}

} // namespace

TEST_CASE("hmac_sha256 matches RFC 4231", "[rendezvous]") {
  SECTION("test case 1") {
    CHECK(hmac_hex(std::string(20, '\x0b'), "Hi There") ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  }
  SECTION("test case 2: a key shorter than the digest") {
    CHECK(hmac_hex("Jefe", "what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  }
  SECTION("test case 3") {
    CHECK(hmac_hex(std::string(20, '\xaa'), std::string(50, '\xdd')) ==
          "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  }
  SECTION("test case 4") {
    CHECK(hmac_hex(counting_key(), std::string(50, '\xcd')) ==
          "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  }
  SECTION("test case 5: the first 128 bits") {
    CHECK(hmac_hex(std::string(20, '\x0c'), "Test With Truncation").substr(0, 32) ==
          "a3b6167473100ee06e0c796c2955552b");
  }
  SECTION("test case 6: a key longer than the block") {
    CHECK(hmac_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  }
  SECTION("test case 7: key and data longer than the block") {
    CHECK(hmac_hex(std::string(131, '\xaa'),
                   "This is a test using a larger than block-size key and a larger than block-size data. "
                   "The key needs to be hashed before being used by the HMAC algorithm.") ==
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
  }
  SECTION("32 raw bytes") {
    CHECK(hmac_sha256("key", "message").size() == 32);
  }
}

TEST_CASE("constant_time_equal", "[rendezvous]") {
  CHECK(constant_time_equal("abc", "abc"));
  CHECK(constant_time_equal("", ""));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "ab"));
  CHECK_FALSE(constant_time_equal(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

TEST_CASE("random_bytes", "[rendezvous]") {
  auto a = random_bytes(k_nonce_bytes);
  auto b = random_bytes(k_nonce_bytes);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->size() == k_nonce_bytes);
  CHECK(*a != *b);
  auto none = random_bytes(0);
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("to_hex", "[rendezvous]") {
  CHECK(to_hex("") == "");
  CHECK(to_hex(std::string_view("\x00\x0f\xa5\xff", 4)) == "000fa5ff");
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
