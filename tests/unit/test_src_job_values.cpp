// SPDX-License-Identifier: MIT
// Durations, names and enumerations of the job file.
#include <catch2/catch.hpp>

#include "src/job/job.hpp"

using namespace std::chrono_literals;

TEST_CASE("parse_duration accepts the documented forms", "[job][duration]") {
  CHECK(ddl::parse_duration("500ms") == 500ms);
  CHECK(ddl::parse_duration("30s") == 30s);
  CHECK(ddl::parse_duration("5m") == 5min);
  CHECK(ddl::parse_duration("2h") == 2h);
  CHECK(ddl::parse_duration("1h30m") == 90min);
  CHECK(ddl::parse_duration("1m30.5s") == 90500ms);
  CHECK(ddl::parse_duration("1.5s") == 1500ms);
  CHECK(ddl::parse_duration("0.5h") == 30min);
  CHECK(ddl::parse_duration("0") == 0ms);
  CHECK(ddl::parse_duration("0s") == 0ms);
}

TEST_CASE("parse_duration refuses anything else", "[job][duration]") {
  for (const char* text : {"", "5", "s", "5x", "-1s", "+1s", " 5s", "5s ", "5 s", "1.5ms", ".5s",
                           "5.s", "1d", "5min", "1h-30m", "99999999999999999999h",
                           "9999999999999h", "1e3s"}) {
    INFO(text);
    CHECK_FALSE(ddl::parse_duration(text).has_value());
  }
}

TEST_CASE("format_duration writes what a user would", "[job][duration]") {
  CHECK(ddl::format_duration(0ms) == "0s");
  CHECK(ddl::format_duration(500ms) == "500ms");
  CHECK(ddl::format_duration(1500ms) == "1.5s");
  CHECK(ddl::format_duration(30s) == "30s");
  CHECK(ddl::format_duration(5min) == "5m");
  CHECK(ddl::format_duration(2h) == "2h");
  CHECK(ddl::format_duration(90min) == "1h30m");
  CHECK(ddl::format_duration(3723004ms) == "1h2m3.004s");
  for (long long ms : {1LL, 999LL, 1000LL, 61001LL, 3600000LL, 86400000LL, 3723004LL}) {
    CHECK(ddl::parse_duration(ddl::format_duration(ddl::Millis{ms})) == ddl::Millis{ms});
  }
}

TEST_CASE("is_env_name", "[job]") {
  CHECK(ddl::is_env_name("PATH"));
  CHECK(ddl::is_env_name("_x1"));
  CHECK_FALSE(ddl::is_env_name(""));
  CHECK_FALSE(ddl::is_env_name("1A"));
  CHECK_FALSE(ddl::is_env_name("A-B"));
  CHECK_FALSE(ddl::is_env_name("A=B"));
  CHECK_FALSE(ddl::is_env_name("A B"));
}

TEST_CASE("host_name_problem", "[job]") {
  CHECK_FALSE(ddl::host_name_problem("node01"));
  CHECK_FALSE(ddl::host_name_problem("gpu-a.example.com"));
  CHECK_FALSE(ddl::host_name_problem("fe80::1%eth0"));
  CHECK_FALSE(ddl::host_name_problem("10.0.0.1"));
  CHECK(ddl::host_name_problem("") == "is empty");
  CHECK(ddl::host_name_problem("-oProxyCommand=x") == "starts with '-'");
  CHECK(ddl::host_name_problem("a b") == "contains a space");
  CHECK(ddl::host_name_problem("a\tb") == "contains a space");
  CHECK(ddl::host_name_problem("a\nb") == "contains a control character");
  CHECK(ddl::host_name_problem("h\xc3\xa9") == "contains a non-ASCII character");
  for (char c : std::string("|&;<>()$`\\\"'*?[]#~{}!^=,")) {
    INFO(c);
    CHECK(ddl::host_name_problem(std::string("a") + c) ==
          std::string("contains the shell metacharacter '") + c + "'");
  }
}

TEST_CASE("backend and framework names", "[job]") {
  CHECK(ddl::parse_backend("auto") == ddl::BackendKind::automatic);
  CHECK(ddl::to_string(ddl::BackendKind::automatic) == "auto");
  CHECK(ddl::parse_backend("local") == ddl::BackendKind::local);
  CHECK(ddl::parse_backend("ssh") == ddl::BackendKind::ssh);
  CHECK(ddl::parse_backend("kubernetes") == ddl::BackendKind::kubernetes);
  CHECK(ddl::parse_backend("mpirun") == ddl::BackendKind::mpirun);
  CHECK_FALSE(ddl::parse_backend("SSH"));
  CHECK(ddl::to_string(ddl::BackendKind::mpirun) == "mpirun");
  CHECK(ddl::to_string(ddl::Framework::tensorflow) == "tensorflow");
  CHECK(ddl::to_string(ddl::Framework::jax) == "jax");
  CHECK(ddl::to_string(ddl::HostKeyCheck::accept_new) == "accept-new");
}
