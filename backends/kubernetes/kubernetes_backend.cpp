// SPDX-License-Identifier: MIT
#include "backends/kubernetes/kubernetes_backend.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <unistd.h>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/child_process.hpp"
#include "backends/kubernetes/kubectl.hpp"
#include "backends/kubernetes/kubectl_access.hpp"
#include "backends/kubernetes/kubectl_stderr.hpp"
#include "backends/shim.hpp"
#include "src/launch/stdin_feed.hpp"
#include "backends/stack_dump.hpp"
#include "src/util/file.hpp"
#include "src/util/signals.hpp"

namespace ddl::kubernetes {

namespace {

constexpr long k_check_timeout_ms = 60'000;
constexpr auto k_shutdown_wait = std::chrono::seconds(5);

struct ExecResult {
  RankExit exit;
  bool shim_started = false;
  std::string kubectl_message;
};

// One short shim run in a pod (the preflight check), bounded in time.
Result<ExecResult> exec_once(const KubernetesSection& k8s, const std::string& pod, const ShimJob& job) {
  auto payload = shim_payload(job);
  if (!payload) {
    return fail(payload.error());
  }
  // Dies with ddl and with its phase: Ctrl-C or the deadline kill it.
  auto child = spawn_piped(exec_argv(k8s, pod, {"sh", "-c", std::string(shim_script())}),
                           {.set_env = {}, .new_process_group = true, .death_signal = SIGKILL});
  if (!child) {
    return fail(child.error());
  }
  write_fully(child->in_fd, *payload);
  KubectlStderr err;
  bool timed_out = false;
  bool stopped = false;
  int status = pump_and_wait(
      *child, [&](Stream stream, std::string_view bytes) {
        if (stream == Stream::err) {
          err.feed(bytes);
        }
      },
      k_check_timeout_ms, &timed_out, &stopped);
  if (stopped) {
    return fail(stop::error("checking the pods"));
  }
  ExecResult result{exit_of_status(status), false, ""};
  err.finish(result.exit.code);
  result.shim_started = err.shim_started();
  result.kubectl_message = timed_out ? "kubectl exec timed out" : err.kubectl_message();
  return result;
}

std::string check_problem(const Result<ExecResult>& result, const std::string& workdir,
                          const std::string& program) {
  if (!result) {
    return result.error().message;
  }
  if (!result->shim_started) {
    return result->kubectl_message.empty()
               ? fmt::format("kubectl exec failed (exit {})", result->exit.code)
               : result->kubectl_message;
  }
  switch (result->exit.code) {
    case 0: return "";
    case 126: return fmt::format("workdir {} does not exist", workdir);
    case 127: return fmt::format("command not found: {}", program);
    default: return fmt::format("the preflight check failed (exit {})", result->exit.code);
  }
}

// [job] workdir; "" (none named) = the container's own.
std::string pod_workdir(const RankLaunch& launch) { return launch.workdir_is_default ? "" : launch.workdir; }

} // namespace

KubernetesBackend::KubernetesBackend(const KubernetesSection& k8s, std::optional<int> pod_slots,
                                     LabelNeed labels)
    : PerRankBackend(std::make_unique<KubectlAccess>(k8s)), k8s_(k8s), pod_slots_(pod_slots), labels_(labels) {
  // A rank's stdin is a pipe to kubectl; a write after kubectl died must be
  // an error, not the end of ddl.
  ::signal(SIGPIPE, SIG_IGN);
}

KubernetesBackend::~KubernetesBackend() { shutdown(); }

std::optional<Result<Inventory>> KubernetesBackend::own_hosts() {
  if (!pod_slots_) {
    return std::nullopt;
  }
  return kubernetes_inventory(k8s_, *pod_slots_, labels_);
}

Result<void> KubernetesBackend::prepare_gang(const Plan& /*plan*/, std::span<const RankLaunch> launches) {
  if (launches.empty()) {
    return fail(ExitCode::launch, "kubernetes: no ranks to start");
  }
  return {};
}

// In the pod: kubectl exec works, and the workdir and argv[0] exist.
Result<void> KubernetesBackend::preflight_unit(std::size_t unit, const Plan& plan,
                                               std::span<const RankLaunch> launches) {
  const std::string workdir = pod_workdir(launches.front());
  const std::string program = launches.front().argv.empty() ? "sh" : launches.front().argv.front();
  ShimJob check;
  check.workdir = workdir;
  check.argv = {"sh", "-c", "command -v \"$1\" >/dev/null 2>&1", "ddl-check", program};
  check.grace = Millis{1000};
  auto result = exec_once(k8s_, plan.hosts[unit].name, check);
  if (!result && stop::is_stop_error(result.error())) {
    return fail(result.error());
  }
  if (std::string problem = check_problem(result, workdir, program); !problem.empty()) {
    return fail(ExitCode::launch, problem);
  }
  return {};
}

std::string KubernetesBackend::preflight_passed(const Plan& plan) {
  return fmt::format("kubernetes: kubectl exec works in {} pod{}", plan.hosts.size(),
                     plan.hosts.size() == 1 ? "" : "s");
}

Result<void> KubernetesBackend::start_rank(const RankLaunch& launch, RankEvents& events) {
  ShimJob job{launch.env, pod_workdir(launch), launch.argv, launch.grace, k_shim_heartbeat_period,
              launch.reads_stdin};
  auto payload = shim_payload(job);
  if (!payload) {
    return fail(payload.error());
  }
  auto child = spawn_piped(exec_argv(k8s_, launch.host.name, {"sh", "-c", std::string(shim_script())}),
                           {.set_env = {}, .new_process_group = true});
  if (!child) {
    return fail(child.error());
  }
  write_fully(child->in_fd, *payload);
  auto rank = std::make_unique<Rank>();
  rank->pid = child->pid;
  rank->in_fd = child->in_fd;
  child->in_fd = -1;  // the pump must not close it: it is the rank's lifeline
  Rank* raw = rank.get();
  {
    std::lock_guard lock(ranks_mutex_);
    ranks_[launch.rank] = std::move(rank);
    start_heartbeat();
  }
  events.started(launch.rank, child->pid);
  if (launch.reads_stdin) {
    attach_stdin(launch.rank, {[this, raw](std::string_view bytes) {
                                 write_control(*raw, shim_stdin_frame(bytes), false);
                                 return true;
                               },
                               [this, raw] { write_control(*raw, k_shim_stdin_eof_line, false); }});
  }
  int id = launch.rank;
  std::string pod = launch.host.name;
  raw->pump = std::thread([raw, id, pod, spawned = *child, &events]() mutable {
    KubectlStderr err;
    int status = pump_and_wait(spawned, [&](Stream stream, std::string_view bytes) {
      if (stream == Stream::out) {
        events.output(id, stream, bytes);
      } else if (std::string pass = err.feed(bytes); !pass.empty()) {
        events.output(id, stream, pass);
      }
    });
    RankExit how = exit_of_status(status);
    if (std::string rest = err.finish(how.code); !rest.empty()) {
      events.output(id, Stream::err, rest);
    }
    if (!err.shim_started() && how.code != 0) {
      std::string said = err.kubectl_message();
      how.launch_error = fmt::format("kubectl exec in pod {} failed: {}", pod,
                                     said.empty() ? fmt::format("exit {}", how.code) : said);
    }
    {
      std::lock_guard lock(raw->mutex);
      if (raw->in_fd >= 0) {
        ::close(raw->in_fd);
        raw->in_fd = -1;
      }
    }
    raw->done = true;
    events.exited(id, how);
  });
  return {};
}

void KubernetesBackend::write_control(Rank& rank, std::string_view line, bool then_close) {
  std::lock_guard lock(rank.mutex);
  if (rank.in_fd < 0) {
    return;
  }
  write_fully(rank.in_fd, line);
  if (then_close) {
    ::close(rank.in_fd);
    rank.in_fd = -1;
  }
}

void KubernetesBackend::signal_rank(int rank, int signo) {
  auto line = shim_signal_line(signo);
  if (!line) {
    return;
  }
  std::lock_guard lock(ranks_mutex_);
  if (auto it = ranks_.find(rank); it != ranks_.end()) {
    write_control(*it->second, *line, false);
  }
}

bool KubernetesBackend::dump_stacks(int rank, DumpTool tool, Millis timeout) {
  std::lock_guard lock(ranks_mutex_);
  auto it = ranks_.find(rank);
  if (it == ranks_.end()) {
    return false;
  }
  write_control(*it->second, stack_dump_line(tool, timeout), false);
  return true;
}

void KubernetesBackend::start_heartbeat() {
  if (heartbeat_.joinable()) {
    return;
  }
  heartbeat_stop_ = false;
  heartbeat_ = std::thread([this] {
    std::unique_lock lock(ranks_mutex_);
    while (!heartbeat_wake_.wait_for(lock, k_shim_heartbeat_period, [this] { return heartbeat_stop_; })) {
      for (auto& [id, rank] : ranks_) {
        write_control(*rank, k_shim_beat_line, false);
      }
    }
  });
}

void KubernetesBackend::stop_heartbeat() {
  {
    std::lock_guard lock(ranks_mutex_);
    heartbeat_stop_ = true;
  }
  heartbeat_wake_.notify_all();
  if (heartbeat_.joinable()) {
    heartbeat_.join();
  }
}

void KubernetesBackend::shutdown() {
  stop_heartbeat();
  std::lock_guard lock(ranks_mutex_);
  for (auto& [id, rank] : ranks_) {
    detach_stdin(id);
    write_control(*rank, "KILL\n", true);
  }
  auto deadline = std::chrono::steady_clock::now() + k_shutdown_wait;
  for (auto& [id, rank] : ranks_) {
    while (!rank->done && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!rank->done) {
      // kubectl hangs (API server gone): the pod side ends on its own when
      // the stream drops; do not wait for it here.
      ::kill(static_cast<pid_t>(rank->pid), SIGKILL);
    }
  }
  for (auto& [id, rank] : ranks_) {
    if (rank->pump.joinable()) {
      rank->pump.join();
    }
  }
  ranks_.clear();
}

} // namespace ddl::kubernetes
