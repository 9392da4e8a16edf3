// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "backends/slurm/srun_command.hpp"
#include "backends/slurm/srun_output.hpp"

using namespace ddl;

namespace {

std::vector<RankLaunch> two_ranks() {
  std::vector<RankLaunch> launches(2);
  for (int r = 0; r < 2; ++r) {
    auto& launch = launches[static_cast<std::size_t>(r)];
    launch.rank = r;
    launch.host.name = r == 0 ? "n1" : "n2";
    launch.argv = {"python3", "train.py"};
    launch.env = {{"SHARED", "same"}, {"RANK", std::to_string(r)}, {"SECRET", "it's"}};
  }
  return launches;
}

} // namespace

TEST_CASE("srun command: placement in a hostfile, values only in the environment", "[slurm]") {
  auto launches = two_ranks();
  slurm::SrunSettings settings;
  settings.hostfile = "/tmp/x/hostfile";
  settings.srun_args = {"--cpu-bind=none"};
  auto command = slurm::build_srun_command(launches, settings);
  REQUIRE(command);
  const auto& argv = command->argv;
  auto at = std::find(argv.begin(), argv.end(), "srun");
  REQUIRE(at != argv.end());
  CHECK(*(at + 1) == "--cpu-bind=none");
  CHECK(std::find(argv.begin(), argv.end(), "--distribution=arbitrary") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--kill-on-bad-exit=1") != argv.end());
  CHECK(argv.back() == "train.py");
  for (const auto& word : argv) {
    CHECK(word.find("it's") == std::string::npos);
  }
  CHECK(slurm::srun_hostfile(launches) == "n1\nn2\n");
  auto has = [&](const std::string& name, const std::string& value) {
    return std::find(command->env.begin(), command->env.end(), std::pair{name, value}) != command->env.end();
  };
  CHECK(has("SLURM_HOSTFILE", "/tmp/x/hostfile"));
  CHECK(has("SHARED", "same"));
  CHECK(has("SECRET", "it's"));
  CHECK(has("DDL_SLURM_ENV_0", "export RANK='0'\n"));
  CHECK(has("DDL_SLURM_ENV_1", "export RANK='1'\n"));
}

TEST_CASE("srun --label output: lines to ranks, markers out, the first own failure", "[slurm]") {
  std::vector<std::string> got;
  slurm::LabeledOutput output(12, [&](int rank, Stream stream, std::string_view bytes) {
    got.push_back(std::to_string(rank) + (stream == Stream::out ? " out " : " err ") + std::string(bytes));
  });
  output.feed(Stream::out, " 0: hello\n11: wor");
  output.feed(Stream::out, "ld\n");
  output.feed(Stream::err, " 0: ddl-slurm: step 7.2\n");
  output.feed(Stream::err, "srun: error: h2: task 3: Exited with exit code 3\n");
  output.feed(Stream::err, " 5: ddl-slurm: rank 5 exit 143\n 3: ddl-slurm: rank 3 exit 3\n 3: oops: 1\n");
  output.feed(Stream::out, " 4: no newline");
  output.finish();
  CHECK(got == std::vector<std::string>{"0 out hello\n", "11 out world\n", "3 err oops: 1\n", "4 out no newline"});
  CHECK(output.step() == "7.2");
  REQUIRE(output.first_failure());
  CHECK(*output.first_failure() == std::pair{3, 3});
  CHECK(output.srun_text() == "srun: error: h2: task 3: Exited with exit code 3\n");
}

TEST_CASE("srun --label output: srun's own report when the marker is lost", "[slurm]") {
  slurm::LabeledOutput output(4, [](int, Stream, std::string_view) {});
  output.feed(Stream::err, " 1: ddl-slurm: rank 1 exit 143\n");
  output.feed(Stream::err, "srun: error: h3: task 2: Exited with exit code 3\n");
  output.finish();
  REQUIRE(output.first_failure());
  CHECK(*output.first_failure() == std::pair{2, 3});
}
