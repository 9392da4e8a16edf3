// SPDX-License-Identifier: MIT
// An error as --json's event: each FILE:LINE:COL line given its parts.
#include <catch2/catch.hpp>

#include "src/util/error_event.hpp"

TEST_CASE("error event: the message whole, and each line with its place when it has one", "[errors]") {
  const ddl::Error error{ddl::ExitCode::usage, "job.toml:3:7: unknown key 'np2'\nand a plain line\n"};
  const ddl::Json event = ddl::error_event(error);
  CHECK(event["event"] == "error");
  CHECK(event["exit_code"] == 2);
  CHECK(event["message"] == error.message);
  REQUIRE(event["errors"].size() == 2);
  CHECK(event["errors"][0] ==
        ddl::Json{{"file", "job.toml"}, {"line", 3}, {"column", 7}, {"message", "unknown key 'np2'"}});
  CHECK(event["errors"][1] == ddl::Json{{"message", "and a plain line"}});
}
