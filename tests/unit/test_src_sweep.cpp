// SPDX-License-Identifier: MIT
// ddl sweep: [sweep] validation, trial expansion, packing, metrics.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/job/job.hpp"
#include "src/sweep/metric.hpp"
#include "src/sweep/packer.hpp"
#include "src/sweep/runner.hpp"
#include "src/sweep/trial_contract.hpp"
#include "src/sweep/trials.hpp"

namespace {

ddl::JobSpec load(std::string_view text) {
  auto job = ddl::parse_job(text, "job.toml", {});
  INFO((job ? std::string() : job.error().message));
  REQUIRE(job);
  REQUIRE(job->sweep);
  return *job;
}

std::string errors(std::string_view text) {
  auto job = ddl::parse_job(text, "job.toml", {});
  if (job) return "";
  CHECK(job.error().code == ddl::ExitCode::usage);
  return job.error().message;
}

std::vector<std::string> described(const std::vector<ddl::sweep::Trial>& trials) {
  std::vector<std::string> out;
  for (const auto& trial : trials) out.push_back(ddl::sweep::describe(trial));
  return out;
}

ddl::Inventory hosts(std::vector<int> slots) {
  ddl::Inventory out;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    out.push_back(ddl::Host{"h" + std::to_string(i + 1), "h" + std::to_string(i + 1), slots[i], {}, "list"});
  }
  return out;
}

} // namespace

TEST_CASE("a grid is the product of the lists, the first parameter slowest", "[sweep]") {
  auto job = load("[sweep]\nmetric = { name = \"loss\" }\n[sweep.parameters]\n"
                  "learning_rate = [0.001, 0.005, 0.01]\ndropout = [0.5, 0.6]\n");
  CHECK(described(ddl::sweep::make_trials(*job.sweep)) ==
        std::vector<std::string>{"learning_rate=0.001 dropout=0.5", "learning_rate=0.001 dropout=0.6",
                                 "learning_rate=0.005 dropout=0.5", "learning_rate=0.005 dropout=0.6",
                                 "learning_rate=0.01 dropout=0.5", "learning_rate=0.01 dropout=0.6"});
  CHECK(job.sweep->retries == 1);
  CHECK_FALSE(job.sweep->np.has_value());  // [launch] np, else 1
  CHECK_FALSE(job.sweep->metric->maximize);
}

TEST_CASE("list zips the lists; random is reproducible from its seed", "[sweep]") {
  auto listed = load("[sweep]\nmethod = \"list\"\n[sweep.parameters]\na = [1, 2]\nb = [\"x\", \"y\"]\n");
  CHECK(described(ddl::sweep::make_trials(*listed.sweep)) == std::vector<std::string>{"a=1 b=x", "a=2 b=y"});

  const std::string random = "[sweep]\nmethod = \"random\"\nsamples = 50\nseed = 7\n[sweep.parameters]\n"
                             "lr = { min = 0.0001, max = 0.1, scale = \"log\" }\n"
                             "batch = { min = 16, max = 256, scale = \"log\", type = \"int\" }\n"
                             "opt = [\"sgd\", \"adam\"]\n";
  auto first = ddl::sweep::make_trials(*load(random).sweep);
  auto again = ddl::sweep::make_trials(*load(random).sweep);
  CHECK(described(first) == described(again));
  REQUIRE(first.size() == 50);
  for (const auto& trial : first) {
    double lr = std::get<double>(trial.params[0].second);
    long long batch = std::get<long long>(trial.params[1].second);
    CHECK((lr >= 0.0001 && lr <= 0.1));
    CHECK((batch >= 16 && batch <= 256));
  }
  std::string other = random;
  other.replace(other.find("seed = 7"), 8, "seed = 8");
  CHECK(described(ddl::sweep::make_trials(*load(other).sweep)) != described(first));
}

TEST_CASE("[sweep] errors come all at once with their place", "[sweep][errors]") {
  CHECK(errors("[sweep]\nmethod = \"grdi\"\nnp = 0\nmetric = { name = \"a=b\", goal = \"up\" }\n"
               "[sweep.parameters]\nlr = { min = 1, max = 0.5 }\n2x = [1]\nd = []\n") ==
        "job.toml:2:10: sweep.method: 'grdi' is not one of grid, random, list; did you mean 'grid'?\n"
        "job.toml:3:6: sweep.np: must be between 1 and 1000000\n"
        "job.toml:4:19: sweep.metric.name: 'a=b' is not a metric name (letters, digits, _ - . / and blanks "
        "between words)\n"
        "job.toml:6:6: sweep.parameters.lr: min must be less than max\n"
        "job.toml:7:1: sweep.parameters: '2x' is not a valid parameter name ([A-Za-z_][A-Za-z0-9_]*)\n"
        "job.toml:8:5: sweep.parameters.d: must list at least one value");
  CHECK(errors("[sweep]\n[sweep.parameters]\nlr = { min = 0.1, max = 1.0 }\n") ==
        "job.toml:3:6: sweep.parameters.lr: a range needs method = \"random\"; grid and list take a list of values");
  CHECK(errors("[sweep]\nmethod = \"random\"\n[sweep.parameters]\na = [1]\n") ==
        "job.toml:1:1: sweep: method = \"random\" needs samples = N");
  CHECK(errors("[sweep]\nmethod = \"list\"\n[sweep.parameters]\na = [1, 2]\nb = [1]\n") ==
        "job.toml:1:1: sweep.parameters.b: method = \"list\" needs lists of one length; a has 2 values, b has 1");
  CHECK(errors("[sweep]\nsamples = 3\n[sweep.parameters]\na = [1]\n") ==
        "job.toml:2:11: sweep.samples: only for method = \"random\"");
  CHECK(errors("[sweep]\nretries = 1\n") == "job.toml:1:1: sweep.parameters: give at least one parameter");
  CHECK(errors("[sweep]\n[sweep.parameters]\nlr = { min = 0, max = 1, scale = \"log\", steps = 3 }\n") ==
        "job.toml:3:6: sweep.parameters.lr: scale = \"log\" needs min > 0\n"
        "job.toml:3:41: unknown key 'steps' in sweep.parameters.lr");
}

TEST_CASE("substitute replaces {name} of parameters only, quoted for sh", "[sweep]") {
  ddl::sweep::Trial trial{3, {{"lr", ddl::ParamValue{0.01}}, {"opt", ddl::ParamValue{std::string("a b")}}}};
  CHECK(ddl::sweep::substitute({"train.py", "--lr={lr}", "{opt}", "{other}", "{"}, trial, false) ==
        std::vector<std::string>{"train.py", "--lr=0.01", "a b", "{other}", "{"});
  CHECK(ddl::sweep::substitute({"python3 t.py --opt {opt}"}, trial, true) ==
        std::vector<std::string>{"python3 t.py --opt 'a b'"});
  CHECK(ddl::sweep::trial_env(trial, "/s/trial-0003") ==
        ddl::EnvList{{"DDL_TRIAL", "3"}, {"DDL_TRIAL_DIR", "/s/trial-0003"}, {"DDL_PARAM_LR", "0.01"},
                     {"DDL_PARAM_OPT", "a b"}});
}

TEST_CASE("metric_in_line takes the last name=value or name: value", "[sweep]") {
  using ddl::sweep::metric_in_line;
  CHECK(metric_in_line("loss=0.25", "loss") == 0.25);
  CHECK(metric_in_line("epoch 3 loss: 1e-3 val_loss=9", "loss") == 0.001);
  CHECK(metric_in_line("loss = 1 then loss=2", "loss") == 2.0);
  CHECK_FALSE(metric_in_line("val_loss=3", "loss"));
  CHECK_FALSE(metric_in_line("loss=nan", "loss"));
  CHECK_FALSE(metric_in_line("loss", "loss"));
  // A name with a blank, as scripts print it (issue 41).
  CHECK(load("[sweep]\nmetric = { name = \"test loss\" }\n[sweep.parameters]\na = [1]\n").sweep->metric->name ==
        "test loss");
  CHECK(metric_in_line("Epoch 2: test loss: 0.31, accuracy 0.9", "test loss") == 0.31);
  CHECK_FALSE(metric_in_line("test  loss: 0.31", "test loss"));
  auto dir = std::filesystem::temp_directory_path() / "ddl-sweep-metric-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.json") << R"({"loss": 0.5, "acc": "x"})";
  CHECK(ddl::sweep::metric_in_json((dir / "m.json").string(), "loss") == 0.5);
  CHECK_FALSE(ddl::sweep::metric_in_json((dir / "m.json").string(), "acc"));
  std::ofstream(dir / "rank0.log") << "loss=3\nnothing\nloss=2\nstep 9\n";
  CHECK(ddl::sweep::metric_in_log((dir / "rank0.log").string(), "loss") == 2.0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("SlotPool packs best fit and avoids failed hosts where it can", "[sweep]") {
  ddl::sweep::SlotPool pool(hosts({4, 2, 4}));
  auto a = pool.take(2);
  REQUIRE(a);
  CHECK(ddl::sweep::hosts_text(pool.specs(*a)) == "h2:2");  // the fullest host it fits on
  auto b = pool.take(3);
  REQUIRE(b);
  CHECK(ddl::sweep::hosts_text(pool.specs(*b)) == "h1:3");
  auto c = pool.take(6);
  CHECK_FALSE(c);  // needs two whole hosts; h1 is busy
  pool.release(*b);
  auto d = pool.take(6);
  REQUIRE(d);
  CHECK(ddl::sweep::hosts_text(pool.specs(*d)) == "h1:4,h3:2");
  pool.release(*d);
  pool.release(*a);
  auto e = pool.take(1, {1});
  REQUIRE(e);
  CHECK(ddl::sweep::host_names(pool, *e) == "h1");
  pool.exclude(0);
  CHECK(pool.usable_slots() == 6);
  ddl::sweep::SlotPool small(hosts({1, 1}));
  small.exclude(1);
  auto f = small.take(1, {0});  // no other host could ever hold it: the failed one it is
  REQUIRE(f);
  CHECK(ddl::sweep::host_names(small, *f) == "h1");
}

TEST_CASE("a trial's hosts keep their login, labels and the GPUs of its slots", "[sweep]") {
  ddl::Inventory inventory = hosts({4, 2});
  inventory[0].user = "ml";
  inventory[0].port = 2222;
  inventory[0].labels = {{"rack", "r1"}};
  inventory[0].gpus = {0, 1, 2, 3};
  ddl::sweep::SlotGpus gpus{{{0}, {1}, {2}, {3}}, {{0}, {1}}};
  ddl::sweep::SlotPool pool(inventory, gpus);
  auto busy = pool.take(3);
  REQUIRE(busy);
  auto placed = pool.take(1, {1});  // h1's last slot: its GPU 3
  REQUIRE(placed);
  const auto specs = pool.specs(*placed);
  REQUIRE(specs.size() == 1);
  CHECK(ddl::sweep::hosts_text(specs) == "ml@h1:2222:1 rack=r1");
  CHECK(specs[0].gpus == std::vector<int>{3});
  CHECK(pool.gpus_of(placed->front()) == std::vector<int>{3});
  // h2's GPUs are not known (its slots stand for GPUs 0 and 1): none in its spec.
  auto other = pool.take(2);
  REQUIRE(other);
  CHECK(pool.specs(*other).front().gpus.empty());
  CHECK(pool.gpus_of(other->front()) == std::vector<int>{0, 1});
}

namespace {

ddl::sweep::TrialRequest sample_request(const std::filesystem::path& dir) {
  ddl::sweep::TrialRequest request;
  request.trial = 3;
  request.attempt = 1;
  request.trial_dir = (dir / "trial-0003").string();
  request.job.file = (dir / "job.toml").string();
  request.job.toml = "[job]\ncommand = [\"true\"]\nenv = { V = \"one\" }\n[hosts]\nslots = \"gpus\"\n"
                     "[sweep]\nmetric = { name = \"loss\" }\n[sweep.parameters]\nlr = [0.1, 0.2]\n";
  request.job.options.env = {"X=1"};
  request.job.options.timeout = "5m";
  request.backend = "ssh";
  request.hosts = {ddl::HostSpec{"gpu-b", 2, "ml", 2222, {{"rack", "r1"}}, {2, 3}}};
  request.np = 2;
  request.parameters = {{"lr", 0.1}, {"name", std::string("adam")}, {"n", 3LL}, {"on", true}};
  request.env = {{"DDL_TRIAL", "3"}, {"V", "two"}};
  request.command = {"python3", "train.py", "--lr", "0.1"};
  request.log_dir = request.trial_dir + "/attempt-1";
  request.result = request.trial_dir + "/result.json";
  return request;
}

} // namespace

TEST_CASE("a trial request reads back as written, and makes the trial's job", "[sweep][contract]") {
  const auto dir = std::filesystem::temp_directory_path() / ("ddl-contract-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto request = sample_request(dir);
  const std::string path = (dir / "request.json").string();
  REQUIRE(ddl::sweep::write_json_file(path, ddl::sweep::request_json(request)));
  auto read = ddl::sweep::read_request(path);
  REQUIRE(read);
  CHECK(ddl::sweep::request_json(*read) == ddl::sweep::request_json(request));
  CHECK(read->hosts == request.hosts);
  auto job = ddl::sweep::trial_job(*read);
  REQUIRE(job);
  CHECK(job->hosts.list == request.hosts);  // typed: user, port, labels and GPUs kept
  CHECK_FALSE(job->hosts.slots_from_gpus);  // not probed again
  CHECK(job->launch.np.max == 2);
  CHECK(job->launch.backend == ddl::BackendKind::ssh);
  CHECK(job->command == request.command);
  CHECK(job->log_dir == request.log_dir);
  CHECK(job->timeout == ddl::Millis{300'000});
  CHECK(job->env == ddl::EnvList{{"X", "1"}, {"DDL_TRIAL", "3"}, {"V", "two"}});
  // Another version, or a key missing, is refused with the file named.
  ddl::Json doc = ddl::sweep::request_json(request);
  doc["version"] = 2;
  REQUIRE(ddl::sweep::write_json_file(path, doc));
  auto newer = ddl::sweep::read_request(path);
  REQUIRE_FALSE(newer);
  CHECK(newer.error().message == path + ": not a trial request of version 1: version 2; this ddl reads version 1");
  doc = ddl::sweep::request_json(request);
  doc.erase("np");
  REQUIRE(ddl::sweep::write_json_file(path, doc));
  auto partial = ddl::sweep::read_request(path);
  REQUIRE_FALSE(partial);
  CHECK(partial.error().message == path + ": not a trial request of version 1: no \"np\"");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a trial result reads back; the metric comes from metrics.json, then rank 0's logs",
          "[sweep][contract]") {
  const auto dir = std::filesystem::temp_directory_path() / ("ddl-result-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "rank-0.attempt-1.stdout.log").string();
  const std::string err = (dir / "rank-0.attempt-1.stderr.log").string();
  std::ofstream(out) << "step 1\n";
  std::ofstream(err) << "loss=0.25\n";
  auto found = ddl::sweep::find_metric(dir.string(), {out, err}, "loss");
  REQUIRE(found);
  CHECK(found->value == 0.25);
  CHECK(found->source == err);
  std::ofstream(dir / "metrics.json") << R"({"loss": 0.5})";
  found = ddl::sweep::find_metric(dir.string(), {out, err}, "loss");
  REQUIRE(found);
  CHECK(found->source == (dir / "metrics.json").string());
  ddl::sweep::TrialResult result{3, 1, 0, "ok"};
  result.metric = 0.5;
  result.metric_source = found->source;
  const std::string path = (dir / "result.json").string();
  REQUIRE(ddl::sweep::write_json_file(path, ddl::sweep::result_json(result)));
  auto read = ddl::sweep::read_result(path);
  REQUIRE(read);
  CHECK(read->reason == "ok");
  CHECK(read->metric == 0.5);
  CHECK_FALSE(ddl::sweep::read_result((dir / "absent.json").string()));
  std::filesystem::remove_all(dir);
}
