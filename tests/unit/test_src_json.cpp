// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <limits>

#include "src/util/json.hpp"

using ddl::Json;
using ddl::JsonStyle;
using ddl::to_json_text;

TEST_CASE("to_json_text", "[json]") {
  SECTION("keys keep their insertion order") {
    const Json doc = {{"zeta", 1}, {"alpha", Json::array({1, 2})}, {"mid", {{"b", true}, {"a", nullptr}}}};
    CHECK(to_json_text(doc) == R"({"zeta":1,"alpha":[1,2],"mid":{"b":true,"a":null}})");
    CHECK(to_json_text(doc, JsonStyle::spaced) ==
          R"({"zeta": 1, "alpha": [1, 2], "mid": {"b": true, "a": null}})");
  }
  SECTION("empty containers") {
    CHECK(to_json_text(Json::object()) == "{}");
    CHECK(to_json_text({{"a", Json::array()}}, JsonStyle::spaced) == R"({"a": []})");
  }
  SECTION("strings are escaped") {
    CHECK(to_json_text(std::string("q\"b\\n\nt\tc\x01")) == R"("q\"b\\n\nt\tc\u0001")");
  }
  SECTION("valid UTF-8 passes through") {
    CHECK(to_json_text("gr\xc3\xbc\xc3\x9f") == "\"gr\xc3\xbc\xc3\x9f\"");
  }
  SECTION("invalid UTF-8, in values and in keys, becomes U+FFFD") {
    CHECK(to_json_text(std::string("a\xff" "b")) == "\"a\xef\xbf\xbd" "b\"");
    CHECK(to_json_text({{std::string("\xfe"), 1}}) == "{\"\xef\xbf\xbd\":1}");
  }
  SECTION("floating-point numbers take their shortest round-trip form") {
    CHECK(to_json_text(Json::array({1234.5, 100.0, 0.1, 1e-05, 95.1234, 0.0})) ==
          "[1234.5,100,0.1,1e-05,95.1234,0]");
    CHECK(to_json_text(Json(std::numeric_limits<double>::quiet_NaN())) == "null");
    CHECK(to_json_text(Json(std::numeric_limits<double>::infinity())) == "null");
  }
  SECTION("integers") {
    CHECK(to_json_text(Json::array({-1, 0, std::size_t{134217728}, std::int64_t{1} << 40})) ==
          "[-1,0,134217728,1099511627776]");
  }
}
