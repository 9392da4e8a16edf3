// SPDX-License-Identifier: MIT
// The live-job socket's versions (src/launch/live_protocol.hpp), the
// contract between a running job's ddl and `ddl ps/logs/stop/signal`, which
// may be another release: every request comes back as sent, and a request or
// a server of another version gives an answer naming both versions.
#include <catch2/catch.hpp>

#include <string>

#include "src/launch/live_protocol.hpp"

namespace live_protocol = ddl::live_protocol;

namespace {
// A line as the server reads it: without its '\n'.
std::string sent(const std::string& request) {
  std::string line = live_protocol::request_line(request);
  REQUIRE(line.ends_with('\n'));
  line.pop_back();
  return line;
}
} // namespace

TEST_CASE("live protocol: version 1, every request read back as sent", "[live][contract]") {
  REQUIRE(live_protocol::k_version == 1);
  CHECK(sent("info") == "ddl-live 1 info");
  for (const char* request : {"info", "logs -1 1", "logs 3 0", "stop", "signal 10"}) {
    auto read = live_protocol::read_request(sent(request));
    REQUIRE(read);
    CHECK(*read == request);
  }
}

TEST_CASE("live protocol: a request of another version is refused naming both", "[live][contract]") {
  auto newer = live_protocol::read_request("ddl-live 2 info");
  REQUIRE_FALSE(newer);
  CHECK(newer.error().message ==
        "this job's ddl speaks live protocol version 1, the asking ddl version 2: ask with the ddl that started the "
        "job");
  auto older = live_protocol::read_request("info");
  REQUIRE_FALSE(older);
  CHECK(older.error().message ==
        "this job's ddl speaks live protocol version 1, the asking ddl one without versions (an older release): ask "
        "with the ddl that started the job");
}

TEST_CASE("live protocol: a server without versions is named as such, other refusals pass as said",
          "[live][contract]") {
  CHECK(live_protocol::refusal("unknown request") ==
        "this job's ddl speaks a live protocol without versions (an older release), this ddl version 1: ask with the "
        "ddl that started the job");
  CHECK(live_protocol::refusal("not a signal") == "not a signal");
  auto newer = live_protocol::read_request("ddl-live 2 stop");
  REQUIRE_FALSE(newer);
  CHECK(live_protocol::refusal(newer.error().message) == newer.error().message);
}
