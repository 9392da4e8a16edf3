// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "src/inventory/inventory.hpp"

using namespace ddl;

namespace {

// A script file in a private temp dir, removed with the object.
struct Script {
  std::string dir;
  std::string path;
  explicit Script(const std::string& body) {
    char pattern[] = "/tmp/ddl-unit-discovery.XXXXXX";
    dir = ::mkdtemp(pattern);
    path = dir + "/hosts.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
  }
  ~Script() {
    std::remove((dir + "/pid").c_str());
    std::remove(path.c_str());
    ::rmdir(dir.c_str());
  }
};

} // namespace

TEST_CASE("script_inventory: host[:slots] lines", "[discovery]") {
  Script script("echo '# found'\necho 'node1:4'\necho\necho 'node2'\n");
  auto hosts = script_inventory(script.path, Millis{5000}, 2);
  REQUIRE(hosts);
  REQUIRE(hosts->size() == 2);
  CHECK((*hosts)[0].name == "node1");
  CHECK((*hosts)[0].slots == 4);
  CHECK((*hosts)[1].slots == 2);
  CHECK((*hosts)[1].source == "script");
}

TEST_CASE("script_inventory: failure shows the script's stderr", "[discovery]") {
  Script script("echo 'cannot reach the scheduler' >&2\nexit 3\n");
  auto hosts = script_inventory(script.path, Millis{5000}, 1);
  REQUIRE_FALSE(hosts);
  CHECK(hosts.error().code == ExitCode::launch);
  CHECK(hosts.error().message ==
        "discovery script " + script.path + " exited with status 3:\ncannot reach the scheduler");
}

TEST_CASE("script_inventory: bad output names the line", "[discovery]") {
  Script script("echo 'a:2'\necho 'a:2'\n");
  auto hosts = script_inventory(script.path, Millis{5000}, 1);
  REQUIRE_FALSE(hosts);
  CHECK(hosts.error().message ==
        script.path + " (output):2: host 'a' is listed twice (first on line 1)");
}

TEST_CASE("script_inventory: timeout kills the script and its children", "[discovery]") {
  Script script("sleep 30 &\necho $! > \"$(dirname \"$0\")/pid\"\nwait\n");
  const auto start = std::chrono::steady_clock::now();
  auto hosts = script_inventory(script.path, Millis{300}, 1);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(hosts);
  CHECK(hosts.error().message.find("did not finish within") != std::string::npos);
  CHECK(took < std::chrono::seconds(5));
  std::ifstream pid_file(script.dir + "/pid");
  pid_t child = 0;
  pid_file >> child;
  REQUIRE(child > 0);
  // The background sleep was in the script's process group: gone (or a zombie
  // about to be reaped by init) shortly after.
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid_text, comm, state;
    gone = !(stat >> pid_text >> comm >> state) || state == "Z";
    if (!gone) {
      ::usleep(20'000);
    }
  }
  CHECK(gone);
}

TEST_CASE("script_inventory: a missing script", "[discovery]") {
  auto hosts = script_inventory("/nonexistent/ddl-hosts.sh", Millis{1000}, 1);
  REQUIRE_FALSE(hosts);
  CHECK(hosts.error().message ==
        "discovery script: cannot run /nonexistent/ddl-hosts.sh: No such file or directory");
}

TEST_CASE("discover_hosts: list, hostfile, and this machine alone", "[discovery]") {
  JobSpec job;
  SECTION("no source: localhost with --np slots") {
    job.launch.np.max = 3;
    auto hosts = discover_hosts(job);
    REQUIRE(hosts);
    REQUIRE(hosts->size() == 1);
    CHECK((*hosts)[0].name == "localhost");
    CHECK((*hosts)[0].address == "127.0.0.1");
    CHECK((*hosts)[0].slots == 3);
    CHECK((*hosts)[0].source == "local");
    CHECK(static_cast<int>((*hosts)[0].gpus.size()) == local_gpu_count());
  }
  SECTION("a list keeps names as addresses, slots default from hosts.slots") {
    job.hosts.list = {HostSpec{"a", 2}, HostSpec{"b", std::nullopt}};
    job.hosts.slots = 3;
    auto hosts = discover_hosts(job);
    REQUIRE(hosts);
    REQUIRE(hosts->size() == 2);
    CHECK((*hosts)[1].name == "b");
    CHECK((*hosts)[1].address == "b");
    CHECK((*hosts)[1].slots == 3);
    CHECK((*hosts)[0].slots == 2);
    CHECK((*hosts)[0].source == "list");
  }
  SECTION("a missing hostfile") {
    job.hosts.hostfile = "/nonexistent/hostfile";
    auto hosts = discover_hosts(job);
    REQUIRE_FALSE(hosts);
    CHECK(hosts.error().code == ExitCode::usage);
    CHECK(hosts.error().message == "cannot read hostfile /nonexistent/hostfile");
  }
}
