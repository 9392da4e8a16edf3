// SPDX-License-Identifier: MIT
// The Kubernetes backend driven through the kubectl test double
// (tests/fakes/kubectl), which runs `kubectl exec` commands on this machine.
#include <chrono>
#include <csignal>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "backends/kubernetes/kubectl_stderr.hpp"
#include "backends/kubernetes/kubernetes_backend.hpp"

using namespace ddl;
using namespace ddl::kubernetes;

namespace {

class Recorder final : public RankEvents {
public:
  void started(int, long) override {}
  void output(int rank, Stream stream, std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    (stream == Stream::out ? out_ : err_)[rank].append(bytes);
  }
  void exited(int rank, const RankExit& how) override {
    std::lock_guard lock(mutex_);
    exits_[rank] = how;
    changed_.notify_all();
  }
  bool wait_exits(std::size_t count, std::chrono::seconds limit) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return exits_.size() >= count; });
  }
  std::string out(int rank) { std::lock_guard lock(mutex_); return out_[rank]; }
  std::string err(int rank) { std::lock_guard lock(mutex_); return err_[rank]; }
  RankExit exit(int rank) { std::lock_guard lock(mutex_); return exits_[rank]; }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, std::string> out_, err_;
  std::map<int, RankExit> exits_;
};

JobSpec fake_job(std::vector<std::string> command) {
  ::setenv("FAKE_KUBECTL_PODS", DDL_FIXTURES "/kubernetes/ready.json", 1);
  ::unsetenv("FAKE_KUBECTL_FAIL");
  ::unsetenv("FAKE_KUBECTL_NETNS");
  JobSpec job;
  job.command = std::move(command);
  job.kubernetes.selector = "app=trainer";
  job.kubernetes.kubectl = DDL_SOURCE_DIR "/tests/fakes/kubectl";
  return job;
}

Plan plan_on(const std::vector<std::string>& pods) {
  Plan plan;
  for (const auto& pod : pods) {
    plan.hosts.push_back(Host{pod, "10.0.0.1", 1, {}, "kubernetes"});
  }
  plan.world_size = static_cast<int>(pods.size());
  return plan;
}

RankLaunch launch_of(int rank, const std::string& pod, std::vector<std::string> argv) {
  RankLaunch launch;
  launch.rank = rank;
  launch.host = Host{pod, "10.0.0.1", 1, {}, "kubernetes"};
  launch.argv = std::move(argv);
  launch.env = {{"DDL_RANK", std::to_string(rank)}, {"ODD", "a 'b' $c\nd"}};
  launch.grace = Millis{1000};
  return launch;
}

// What prepare() checks: the argv of the ranks (the job named no workdir).
std::vector<RankLaunch> launches_of(std::vector<std::string> argv) {
  RankLaunch launch = launch_of(0, "trainer-1", std::move(argv));
  launch.workdir = "/launcher/cwd";
  launch.workdir_is_default = true;
  return {launch};
}

} // namespace

TEST_CASE("kubectl's own stderr is told from the rank's", "[kubernetes]") {
  KubectlStderr err;
  std::string passed = err.feed("ddl-shim: pid 42\nrank says\ncommand terminated");
  passed += err.feed(" with exit code 3\n");
  passed += err.finish(3);
  CHECK(passed == "rank says\n");
  CHECK(err.shim_started());

  KubectlStderr look_alike;
  passed = look_alike.feed("ddl-shim: pid 7\ncommand terminated with exit code 9\nmore\n");
  passed += look_alike.finish(0);
  CHECK(passed == "command terminated with exit code 9\nmore\n");

  KubectlStderr failed;
  CHECK(failed.feed("error: You must be logged in to the server (Unauthorized)\n").empty());
  CHECK(failed.finish(1).empty());
  CHECK_FALSE(failed.shim_started());
  CHECK(failed.kubectl_message() == "error: You must be logged in to the server (Unauthorized)");
}

TEST_CASE("kubectl exec runs ranks with their env, exit codes pass through", "[kubernetes]") {
  JobSpec job = fake_job({"sh"});
  KubernetesBackend backend(job.kubernetes);
  REQUIRE(backend.prepare(plan_on({"trainer-1", "trainer-2"}), launches_of({"sh"})).has_value());
  Recorder events;
  const char* script = "printf '%s|%s|%s\\n' \"$DDL_RANK\" \"$ODD\" \"$PATH\"; echo oops >&2; exit $((DDL_RANK + 3))";
  std::vector<RankLaunch> gang{launch_of(0, "trainer-1", {"sh", "-c", script}),
                               launch_of(1, "trainer-2", {"sh", "-c", script})};
  GangStart started = backend.start(gang, events);
  REQUIRE_FALSE(started.error);
  REQUIRE(started.started == 2);
  REQUIRE(events.wait_exits(2, std::chrono::seconds(20)));
  CHECK(events.out(0).starts_with("0|a 'b' $c\nd|"));
  CHECK(events.err(0) == "oops\n");
  CHECK(events.exit(0).code == 3);
  CHECK(events.exit(0).launch_error.empty());
  CHECK(events.exit(1).code == 4);
  backend.shutdown();
}

TEST_CASE("kubectl failures are launch errors", "[kubernetes]") {
  JobSpec job = fake_job({"sh"});
  KubernetesBackend backend(job.kubernetes);
  auto missing = backend.prepare(plan_on({"trainer-1", "gone-0"}), launches_of({"sh"}));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ExitCode::launch);
  CHECK(missing.error().message ==
        "cannot start in 1 of 2 pods:\n  pod gone-0: Error from server (NotFound): pods \"gone-0\" not found");

  ::setenv("FAKE_KUBECTL_FAIL", "auth", 1);
  auto denied = backend.prepare(plan_on({"trainer-1"}), launches_of({"sh"}));
  REQUIRE_FALSE(denied.has_value());
  CHECK(denied.error().message ==
        "cannot start in 1 of 1 pod:\n  pod trainer-1: error: You must be logged in to the server (Unauthorized)");
  Recorder events;
  RankLaunch alone = launch_of(0, "trainer-1", {"true"});
  REQUIRE(backend.start({&alone, 1}, events).started == 1);
  REQUIRE(events.wait_exits(1, std::chrono::seconds(20)));
  CHECK(events.exit(0).launch_error ==
        "kubectl exec in pod trainer-1 failed: error: You must be logged in to the server (Unauthorized)");
  CHECK(events.err(0).empty());
  ::unsetenv("FAKE_KUBECTL_FAIL");

  JobSpec nocmd = fake_job({"no-such-program-ddl"});
  KubernetesBackend backend2(nocmd.kubernetes);
  auto notfound = backend2.prepare(plan_on({"trainer-1"}), launches_of({"no-such-program-ddl"}));
  REQUIRE_FALSE(notfound.has_value());
  CHECK(notfound.error().message ==
        "cannot start in 1 of 1 pod:\n  pod trainer-1: command not found: no-such-program-ddl");
}

TEST_CASE("Signals and shutdown reach the process group inside the pod", "[kubernetes]") {
  JobSpec job = fake_job({"sh"});
  KubernetesBackend backend(job.kubernetes);
  Recorder events;
  RankLaunch alone = launch_of(0, "trainer-1", {"sh", "-c", "trap 'echo got-usr1' USR1; echo up; while :; do sleep 0.05; done"});
  REQUIRE(backend.start({&alone, 1}, events).started == 1);
  for (int i = 0; i < 200 && events.out(0).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  backend.signal_all(SIGUSR1);
  for (int i = 0; i < 200 && events.out(0).find("got-usr1") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(events.out(0) == "up\ngot-usr1\n");
  auto begin = std::chrono::steady_clock::now();
  backend.shutdown();
  REQUIRE(events.wait_exits(1, std::chrono::seconds(1)));
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(4));
  CHECK(events.exit(0).code == 128 + SIGKILL);
}
