// SPDX-License-Identifier: MIT
#include "cmd/pipeline.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/registry.hpp"
#include "rendezvous/launcher.hpp"
#include "src/launch/supervisor.hpp"
#include "src/render/launches.hpp"
#include "src/util/file.hpp"
#include "src/util/net.hpp"
#include "src/util/signals.hpp"

extern char** environ;

namespace ddl::cmd {

namespace {

// torch's default, where the backend cannot look for a free port.
constexpr int k_torch_default_port = 29500;

bool uses(const JobSpec& job, Framework framework) {
  return std::ranges::find(job.frameworks, framework) != job.frameworks.end();
}

// torch.master_port as launched, looked at on rank 0's host through the
// backend: the job's, checked free (JAX's coordinator takes the next port
// too), or a free one when it is 0.
Result<int> launch_master_port(const JobSpec& job, Backend& backend, const Plan& plan) {
  const int first = job.torch.master_port;
  if (!uses(job, Framework::torch) && !uses(job, Framework::jax)) {
    return first;
  }
  const int count = uses(job, Framework::jax) ? 2 : 1;
  auto checked = backend.master_port(plan.hosts.front(), first, count);
  if (!checked) {
    return first != 0 ? first : k_torch_default_port;
  }
  if (!*checked) {
    return fail(ExitCode::launch, "torch.master_port: " + checked->error().message);
  }
  return **checked;
}

// Whether ddl gives torch ranks a TORCHELASTIC_ERROR_FILE: for ranks on this
// machine, whose files it reads back, unless the user sets one.
bool wants_error_dir(const JobSpec& job, const Backend& backend) {
  return uses(job, Framework::torch) && backend.ranks_are_local() &&
         !user_sets_env(job, "TORCHELASTIC_ERROR_FILE");
}

// The folder of the ranks' TORCHELASTIC_ERROR_FILE: --log-dir (the files
// stay there beside the logs), else a private one removed when the launch
// ends. Only for torch ranks on this machine, whose files ddl reads back.
class ErrorDir {
public:
  ErrorDir() = default;
  ErrorDir(const ErrorDir&) = delete;
  ErrorDir& operator=(const ErrorDir&) = delete;
  ~ErrorDir() {
    if (owned_) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

  Result<void> make(const JobSpec& job, const Backend& backend) {
    if (!wants_error_dir(job, backend)) {
      return {};
    }
    if (!job.log_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(job.log_dir, ec);
      path_ = std::filesystem::absolute(job.log_dir, ec).string();
      return {};
    }
    path_ = make_private_dir("ddl-errors");
    if (path_.empty()) {
      return fail(ExitCode::launch, fmt::format("cannot create a folder for the ranks' error files: {}",
                                                std::strerror(errno)));
    }
    owned_ = true;
    return {};
  }

private:
  std::string path_;
  bool owned_ = false;
};

// Hosts that the launcher reaches at a loopback address are this machine
// (a name that Debian maps to 127.0.1.1, "localhost"): when some host is
// remote, they get the address this machine has toward the first remote one,
// which remote ranks can reach (MASTER_ADDR, TF_CONFIG, hostfiles).
Inventory routable_addresses(Inventory hosts, bool ranks_are_local) {
  if (ranks_are_local) {
    return hosts;
  }
  auto remote = std::ranges::find_if(hosts, [](const Host& host) { return !net::is_loopback(host.address); });
  if (remote == hosts.end()) {
    return hosts;
  }
  net::Route route = net::route_to(remote->address);
  if (route.end != net::RouteEnd::found) {
    return hosts;
  }
  for (Host& host : hosts) {
    if (net::is_loopback(host.address)) {
      spdlog::info("{}: address {} is this machine's loopback; remote ranks reach it at {}", host.name,
                   host.address, route.address);
      host.address = route.address;
    }
  }
  return hosts;
}

} // namespace


std::string rank0_address(const Plan& plan) {
  return plan.hosts.at(plan.ranks.empty() ? 0 : plan.ranks.front().host_index).address;
}

Result<std::vector<HostInterface>> job_interfaces(const JobSpec& job, Backend& backend, const Plan& plan) {
  if (std::ranges::all_of(k_interface_variables, [&](std::string_view name) { return user_sets_env(job, name); })) {
    return std::vector<HostInterface>{};
  }
  const std::string target = rank0_address(plan);
  auto found = backend.find_interfaces(plan.hosts, target);
  if (stop::requested()) {
    return fail(stop::error("probing each host's network interface"));
  }
  for (std::size_t h = 0; h < found.size() && h < plan.hosts.size(); ++h) {
    if (found[h].name.empty() && !found[h].unreachable) {
      spdlog::warn("{}: no interface toward rank 0 ({}): {}; GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME and "
                   "HOROVOD_GLOO_IFACE are not set there",
                   plan.hosts[h].name, target, found[h].why);
    }
  }
  return found;
}

Result<PlannedJob> plan_job(const JobSpec& job) {
  auto selected = select_backend(job);
  if (!selected) {
    return fail(selected.error());
  }
  PlannedJob planned{std::move(selected->backend), std::move(selected->why), {}};
  Result<Inventory> hosts = routable_addresses(planned.backend->resolve_addresses(std::move(selected->hosts)),
                                                planned.backend->ranks_are_local());
  if (job.hosts.slots_from_gpus) {
    hosts = planned.backend->probe_gpus(std::move(*hosts));
    if (!hosts) {
      return fail(hosts.error());
    }
  }
  auto plan = make_plan(job, *hosts);
  if (!plan) {
    return fail(plan.error());
  }
  planned.plan = std::move(*plan);
  if (stop::requested()) {
    return fail(stop::error("planning the job"));
  }
  return planned;
}

LaunchContext preview_context(const JobSpec& job, const PlannedJob& planned) {
  LaunchContext ctx;
  ctx.master_port = job.torch.master_port;
  ctx.backend = backend_shown(planned);
  ctx.horovod_gloo = uses_horovod_gloo(job, *planned.backend);
  if (wants_error_dir(job, *planned.backend)) {
    ctx.error_dir = job.log_dir.empty() ? "<error-dir>" : job.log_dir;
  }
  return ctx;
}

std::string backend_shown(const PlannedJob& planned) {
  const std::string name(planned.backend->name());
  return planned.backend_why.empty() ? name : name + " (" + planned.backend_why + ")";
}

bool uses_horovod_gloo(const JobSpec& job, const Backend& backend) {
  return std::ranges::find(job.frameworks, Framework::horovod) != job.frameworks.end() &&
         !backend.starts_mpi_world();
}

RankPlace rank_place(const Backend& backend) {
  return backend.ranks_are_local() ? RankPlace::this_machine : RankPlace::remote;
}

Result<int> launch_job(const JobSpec& job, PlannedJob& planned, const LaunchOptions& options,
                       const AfterRanks& after_ranks) {
  Backend& backend = *planned.backend;
  const Plan& plan = planned.plan;
  LaunchContext ctx;
  auto master_port = launch_master_port(job, backend, plan);
  if (!master_port) {
    return fail(master_port.error());
  }
  ctx.master_port = *master_port;
  ErrorDir error_dir;
  if (auto made = error_dir.make(job, backend); !made) {
    return fail(made.error());
  }
  ctx.error_dir = error_dir.path();
  auto interfaces = job_interfaces(job, backend, plan);
  if (!interfaces) {
    return fail(interfaces.error());
  }
  ctx.interfaces = std::move(*interfaces);
  // Before any rank: its address and a fresh token go into every rank's env.
  ctx.horovod_gloo = uses_horovod_gloo(job, backend);
  // The hang watchdog's board: the ranks' lines and heartbeats feed it.
  std::shared_ptr<ProgressBoard> progress;
  if (job.watchdog.enabled()) {
    progress = std::make_shared<ProgressBoard>(plan.world_size, job.watchdog);
  }
  auto on_heartbeat = [progress](int rank) {
    if (progress) {
      progress->heartbeat(rank);
    }
  };
  auto rendezvous =
      rendezvous::JobRendezvous::start(job, plan, backend.ranks_are_local(), ctx.horovod_gloo, on_heartbeat);
  if (!rendezvous) {
    return fail(rendezvous.error());
  }
  ctx.rendezvous = (*rendezvous)->endpoint();
  ctx.token = (*rendezvous)->token();
  ctx.horovod_address = (*rendezvous)->horovod_address();
  ctx.horovod_port = std::to_string((*rendezvous)->horovod_port());
  SupervisorOptions supervisor;
  supervisor.timeout = job.timeout;
  supervisor.deadline = stop::deadline();
  supervisor.max_restarts = options.max_restarts;
  supervisor.grace = job.grace;
  supervisor.output = options.output;
  supervisor.output.secrets = {ctx.token};  // never printed, logged or sent as an event
  supervisor.watchdog = [&] { return (*rendezvous)->overdue(); };
  supervisor.stop = job.stop;
  supervisor.hang = job.watchdog;
  supervisor.progress = progress;
  const RankPlace place = rank_place(backend);
  auto build = [&](int attempt) -> Result<std::vector<RankLaunch>> {
    (*rendezvous)->begin_attempt(attempt);
    LaunchContext attempt_ctx = ctx;
    attempt_ctx.attempt = attempt;
    return build_launches(job, plan, attempt_ctx, place, environ);
  };
  auto code = supervise(backend, plan, build, supervisor);
  backend.shutdown();
  if (after_ranks) {
    after_ranks((*rendezvous)->server());
  }
  return code;
}

} // namespace ddl::cmd
