// SPDX-License-Identifier: MIT
// The one host pipeline (src/launch/plan_hosts.hpp): what run, bench,
// render, hosts, sweep and the elastic re-plan all get their hosts from.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/local/local_backend.hpp"
#include "src/launch/plan_hosts.hpp"

namespace {

// TEST DOUBLE: nvidia-smi with two GPUs, first on PATH while it lives.
class TwoGpus {
public:
  TwoGpus() : dir_(std::filesystem::temp_directory_path() / ("ddl-gpus-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    const auto tool = dir_ / "nvidia-smi";
    std::ofstream(tool) << "#!/bin/sh\necho 'GPU 0: Test Double'\necho 'GPU 1: Test Double'\n";
    std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
    const char* path = std::getenv("PATH");
    old_path_ = path != nullptr ? path : "";
    ::setenv("PATH", (dir_.string() + ":" + old_path_).c_str(), 1);
  }
  TwoGpus(const TwoGpus&) = delete;
  TwoGpus& operator=(const TwoGpus&) = delete;
  ~TwoGpus() {
    ::setenv("PATH", old_path_.c_str(), 1);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

private:
  std::filesystem::path dir_;
  std::string old_path_;
};

ddl::JobSpec gpu_job(std::string exclude) {
  ddl::JobSpec job;
  job.hosts.list = {ddl::HostSpec{"localhost", std::nullopt}};
  job.hosts.slots_from_gpus = true;
  job.hosts.exclude = std::move(exclude);
  return job;
}

} // namespace

TEST_CASE("hosts_for_plan: slots = gpus are filtered after the probe, found again or not", "[plan_hosts]") {
  TwoGpus gpus;
  ddl::LocalBackend backend;
  const ddl::JobSpec job = gpu_job("localhost:1");
  // What the elastic re-plan calls: the host source run again, every step.
  auto again = ddl::hosts_for_plan(job, backend);
  REQUIRE(again);
  REQUIRE(again->size() == 1);
  CHECK(again->front().slots == 1);
  CHECK(again->front().gpus == std::vector<int>{0});
  // What run, sweep and hosts call on the hosts select_backend found.
  auto found = ddl::found_hosts(job, backend);
  REQUIRE(found);
  auto planned = ddl::hosts_for_plan(job, backend, *found);
  REQUIRE(planned);
  CHECK(planned->front().gpus == std::vector<int>{0});
  // `hosts --check` stops before the probe: nothing filtered by GPU yet.
  auto checked = ddl::hosts_for_plan(job, backend, *found, ddl::HostSteps::before_probe);
  REQUIRE(checked);
  CHECK(checked->front().gpus.empty());
}

TEST_CASE("hosts_for_plan: known slots are filtered before addresses are looked up", "[plan_hosts]") {
  ddl::LocalBackend backend;
  ddl::JobSpec job;
  job.hosts.list = {ddl::HostSpec{"localhost", 2}, ddl::HostSpec{"127.0.0.1", 1}};
  job.hosts.exclude = "127.0.0.1";
  auto hosts = ddl::hosts_for_plan(job, backend);
  REQUIRE(hosts);
  REQUIRE(hosts->size() == 1);
  CHECK(hosts->front().name == "localhost");
  job.hosts.exclude = "nowhere";
  auto refused = ddl::hosts_for_plan(job, backend);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ddl::ExitCode::usage);
}
