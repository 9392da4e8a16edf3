// SPDX-License-Identifier: MIT
// Host labels (`key=value` words) in host lists and hostfiles, and the
// [placement] and elastic keys of the job file.
#include <catch2/catch.hpp>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

using namespace ddl;

namespace {

std::string labels_of(const Result<std::vector<HostSpec>>& hosts) {
  if (!hosts) {
    return "error: " + hosts.error().message;
  }
  std::string out;
  for (const auto& host : *hosts) {
    out += (out.empty() ? "" : " | ") + host.name + (host.slots ? ":" + std::to_string(*host.slots) : "") + " " +
           format_labels(host.labels);
  }
  return out;
}

std::string job_errors(std::string_view text, const Overrides& overrides = {}) {
  auto job = parse_job(text, "job.toml", overrides);
  return job ? std::string() : job.error().message;
}

} // namespace

TEST_CASE("host lists: label words after a host apply to every host it expands to", "[labels]") {
  CHECK(labels_of(expand_hostlist("gpu01:8 rack=r1 gpu=a100")) == "gpu01:8 gpu=a100 rack=r1");
  CHECK(labels_of(expand_hostlist("n[1-2]:2 rack=r1, n3  rack=r2")) ==
        "n1:2 rack=r1 | n2:2 rack=r1 | n3 rack=r2");
  CHECK(labels_of(expand_hostlist("a:2 topology.kubernetes.io/zone=z-1 empty=")) ==
        "a:2 empty= topology.kubernetes.io/zone=z-1");
  CHECK(labels_of(expand_hostlist("a =r1")) ==
        "error: bad label '=r1': expected KEY=VALUE of letters, digits and . _ / - in 'a =r1'");
  CHECK(labels_of(expand_hostlist("a rack=r1 rack=r2")) == "error: label 'rack' given twice in 'a rack=r1 rack=r2'");
  CHECK(labels_of(expand_hostlist("a x=$(id)")).starts_with("error: bad label 'x=$(id)'"));
}

TEST_CASE("hostfiles: extra key=value words are labels", "[labels]") {
  CHECK(labels_of(parse_hostfile("h1 slots=4 rack=r1 gpu=a100\nh2:2 rack=r2\n", "hf")) ==
        "h1:4 gpu=a100 rack=r1 | h2:2 rack=r2");
  // A misspelt slot key stays an error, never a silent label.
  CHECK(labels_of(parse_hostfile("h1 slot=4\n", "hf")) == "error: hf:1: unknown key 'slot'; did you mean 'slots'?");
  CHECK(labels_of(parse_hostfile("h1 rack=r1 rack=r2\n", "hf")) == "error: hf:1: label 'rack' given twice");
}

TEST_CASE("job file: [placement] and the elastic [launch] keys", "[labels][restart]") {
  auto job = parse_job("[placement]\nstrategy = \"spread\"\nconstraints = { gpu = \"a100\" }\norder = \"rack\"\n"
                       "[launch]\nnp = 8\nmin_np = 4\nmax_host_losses = 2\nhost_failures = 3\n"
                       "restart_on = [75]\nfail_on = [42]\nbackoff = \"2s\"\n",
                       "job.toml", {});
  REQUIRE(job);
  CHECK(job->placement.strategy == PlacementStrategy::spread);
  CHECK(format_labels(job->placement.constraints) == "gpu=a100");
  CHECK(job->placement.order == "rack");
  CHECK(job->launch.np.min == 4);
  CHECK(job->launch.max_host_losses == 2);
  CHECK(job->launch.host_failures == 3);
  CHECK(job->launch.restart_on == std::vector<int>{75});
  CHECK(job->launch.fail_on == std::vector<int>{42});
  CHECK(job->launch.backoff == Millis{2000});

  CHECK(job_errors("[placement]\nstrategy = \"packed\"\n") ==
        "job.toml:2:12: placement.strategy: 'packed' is not one of pack, spread; did you mean 'pack'?");
  CHECK(job_errors("[launch]\nfail_on = [300]\n") == "job.toml:2:12: launch.fail_on[0]: expected an exit code from 0 to 255");
  CHECK(job_errors("[launch]\nnp = 2\nmin_np = 3\n") == "job.toml:3:10: launch.min_np: 3 is more than launch.np 2");
  CHECK(job_errors("[placement]\nconstraints = { gpu = 1 }\n") ==
        "job.toml:2:23: placement.constraints.gpu: expected a string, got an integer");
}

TEST_CASE("label_need: labels that cost a call are read only when used", "[labels]") {
  auto need = [](std::string_view text, bool shown = false) {
    auto job = parse_job(text, "job.toml", {});
    REQUIRE(job);
    job->hosts.show_labels = shown;
    return label_need(*job);
  };
  CHECK(need("") == LabelNeed::none);
  CHECK(need("[placement]\nstrategy = \"spread\"\n") == LabelNeed::none);
  CHECK(need("", true) == LabelNeed::shown);
  CHECK(need("[placement]\nconstraints = { gpu = \"a100\" }\n") == LabelNeed::required);
  CHECK(need("[placement]\norder = \"rack\"\n", true) == LabelNeed::required);
}

TEST_CASE("np range option (MIN and MAX) sets min_np and np", "[labels][restart]") {
  Overrides range;
  range.np = "3:4";
  auto job = parse_job("", "job.toml", range);
  REQUIRE(job);
  CHECK(job->launch.np.max == 4);
  CHECK(job->launch.np.min == 3);
  range.np = "5";
  job = parse_job("", "job.toml", range);
  REQUIRE(job);
  CHECK(job->launch.np.max == 5);
  CHECK_FALSE(job->launch.np.min);
  range.np = "4:3";
  CHECK(job_errors("", range) == "--np: the least (4) is more than the most (3)");
  range.np = "x:3";
  CHECK(job_errors("", range) == "--np: 'x:3' is not N or MIN:MAX");
}
