// SPDX-License-Identifier: MIT
#include "src/session/rsh_agent.hpp"

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unistd.h>

#include "backends/registry.hpp"

namespace ddl::session {

namespace {

class PassThrough final : public RankEvents {
public:
  void started(int, long) override {}
  void output(int, Stream stream, std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    int fd = stream == Stream::out ? 1 : 2;
    while (!bytes.empty()) {
      ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n <= 0) {
        break;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void exited(int, const RankExit& how) override {
    std::lock_guard lock(mutex_);
    exit_ = how;
    ended_ = true;
    changed_.notify_all();
  }
  // Waits up to `ms`; true once the command ended.
  bool wait_ms(int ms) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return ended_; });
  }
  RankExit how() {
    std::lock_guard lock(mutex_);
    return exit_;
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  RankExit exit_;
  bool ended_ = false;
};

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) {
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

} // namespace

Result<RshEnd> run_rsh_agent(const std::string& host_name, const std::vector<std::string>& command) {
  const char* job_file = std::getenv("DDL_RSH_JOB");
  const char* transport = std::getenv("DDL_RSH_TRANSPORT");
  auto job = load_job(job_file != nullptr ? job_file : "", Overrides{});
  if (!job) {
    return fail(job.error());
  }
  // The launcher's ssh config (its -F, else [ssh] config): one for every way
  // ddl reaches a host.
  if (const char* config = std::getenv("DDL_RSH_SSH_CONFIG"); config != nullptr && *config != 0) {
    job->ssh.config = config;
  }
  std::unique_ptr<Backend> backend = rsh_backend(*job, transport != nullptr ? transport : "");
  Host host{host_name, host_name, 1, {}, "rsh"};
  Plan plan;
  plan.job = job->name;
  plan.world_size = 1;
  plan.hosts = {host};
  plan.ranks = {RankSlot{}};
  // Signals wait for the loop below instead of killing us with the channel open.
  sigset_t stops;
  sigemptyset(&stops);
  for (int signo : {SIGTERM, SIGINT, SIGHUP}) {
    sigaddset(&stops, signo);
  }
  ::pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  RankLaunch launch;
  launch.host = host;
  launch.argv = {"sh", "-c", join_words(command)};
  launch.workdir = "/";
  launch.grace = Millis{2000};
  if (auto prepared = backend->prepare(plan, {&launch, 1}); !prepared) {
    return fail(prepared.error());
  }
  PassThrough events;
  if (auto started = backend->start({&launch, 1}, events); started.error) {
    return fail(*started.error);
  }
  while (!events.wait_ms(0)) {
    timespec tick{0, 100'000'000};
    int signo = ::sigtimedwait(&stops, nullptr, &tick);
    if (signo > 0) {
      backend->signal_all(SIGTERM);
      events.wait_ms(3000);
      break;
    }
  }
  backend->shutdown();
  RankExit how = events.how();
  return RshEnd{how.code, how.launch_error};
}

} // namespace ddl::session
