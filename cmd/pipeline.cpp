// SPDX-License-Identifier: MIT
#include "cmd/pipeline.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <numeric>
#include <random>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/registry.hpp"
#include "cmd/verbose.hpp"
#include "rendezvous/launcher.hpp"
#include "src/launch/live_server.hpp"
#include "src/launch/plan_hosts.hpp"
#include "src/launch/restart_policy.hpp"
#include "src/launch/supervisor.hpp"
#include "src/render/container.hpp"
#include "src/render/frameworks/horovod.hpp"
#include "src/render/frameworks/tensorflow.hpp"
#include "src/render/frameworks/torch.hpp"
#include "src/render/launches.hpp"
#include "src/util/file.hpp"
#include "src/util/own_path.hpp"
#include "src/util/phase_timer.hpp"
#include "src/util/rank_logs.hpp"
#include "src/util/signals.hpp"
#include "src/util/net_resolve.hpp"

extern char** environ;

namespace ddl::cmd {

namespace {

// torch.master_port as launched, looked at on rank 0's host through the
// backend: the job's, checked free (with the ports its frameworks take after
// it), or free ones when it is 0.
Result<int> launch_master_port(const JobSpec& job, Backend& backend, const Plan& plan) {
  const int first = job.torch.master_port;
  const int count = master_ports_needed(job);
  if (count == 0) {
    return first;
  }
  auto checked = backend.master_port(plan.hosts.front(), first, count);
  if (!checked) {
    return first != 0 ? first : k_torch_default_port;
  }
  if (!*checked) {
    return fail(ExitCode::launch, "torch.master_port: " + checked->error().message);
  }
  return **checked;
}

bool wants_error_dir(const JobSpec& job, const Backend& backend) {
  return wants_error_files(job, backend.ranks_are_local());
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
      auto own = own_folder(job.log_dir, "log folder", true);
      if (!own) {
        return fail(ExitCode::usage, own.error().message);
      }
      path_ = *own;
      // A link planted while the folder was not yet safe must not become a rank's error file.
      remove_foreign_files(path_, rank_file_suffix(RankFile::error_json));
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

// The job's control socket (ddl ps, logs, stop, signal); none, with a
// warning, when the runtime folder is unsafe: the job itself still runs.
// Under --mpi pmix its ranks are the MPI ranks (`host_ranks`: each host's).
std::unique_ptr<LiveServer> start_live(const JobSpec& job, const PlannedJob& planned,
                                       const std::vector<int>& host_ranks) {
  const int ranks = host_ranks.empty() ? planned.plan.world_size
                                       : std::accumulate(host_ranks.begin(), host_ranks.end(), 0);
  LiveJobInfo info{job.name, ranks, {}, std::string(planned.backend->name()), job.log_dir};
  for (const Host& host : planned.plan.hosts) {
    info.hosts.push_back(host.name);
  }
  auto server = LiveServer::start(std::move(info));
  if (!server) {
    spdlog::warn("no ddl ps/logs/stop/signal for this job: {}", server.error().message);
    return nullptr;
  }
  return std::move(*server);
}

// What the supervisor tells the control socket, and what it asks back.
void attach_live(LiveServer& live, SupervisorOptions& supervisor) {
  supervisor.output.tap = [&live](int rank, Stream stream, std::string_view text, LineEnd end) {
    live.line(rank, stream, text, end);
  };
  supervisor.on_state = [&live](std::string_view state, int attempt) { live.set_state(state, attempt); };
  supervisor.rank_signals = &live.rank_signals();
}

} // namespace

namespace {

// The backend's find_interfaces; without DNS (a dry run) only on the hosts
// whose address is known without it, the others shown as not asked.
std::vector<HostInterface> interfaces_toward(Backend& backend, const Inventory& hosts, const std::string& target) {
  if (net::name_lookup() == net::NameLookup::resolver) {
    return backend.find_interfaces(hosts, target);
  }
  // Every host would look rank 0's address up itself.
  const bool target_known = net::known_without_dns(target);
  Inventory asked;
  for (const Host& host : hosts) {
    if (target_known && net::known_without_dns(host.address)) {
      asked.push_back(host);
    }
  }
  auto answers = asked.empty() ? std::vector<HostInterface>{} : backend.find_interfaces(asked, target);
  if (!asked.empty() && answers.empty()) {
    return answers;  // the backend does not look (mpirun, slurm): no DNS was the reason for nothing
  }
  std::vector<HostInterface> found;
  std::size_t next = 0;
  for (const Host& host : hosts) {
    if (target_known && net::known_without_dns(host.address) && next < answers.size()) {
      found.push_back(std::move(answers[next++]));
    } else {
      found.push_back(interface_unknown(
          fmt::format("not asked: a dry run does not look {} up in DNS", target_known ? host.address : target)));
    }
  }
  return found;
}

// One warning per reason, naming its hosts (the first few of many): a dry
// run of a thousand hosts has one reason for them all.
void warn_hosts_without_interface(const Plan& plan, const std::vector<HostInterface>& found,
                                  const std::string& target) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (std::size_t h = 0; h < found.size() && h < plan.hosts.size(); ++h) {
    if (!found[h].name.empty() || found[h].unreachable) {
      continue;
    }
    auto same = std::ranges::find_if(by_reason, [&](const auto& entry) { return entry.first == found[h].why; });
    if (same == by_reason.end()) {
      by_reason.emplace_back(found[h].why, std::vector<std::string>{});
      same = std::prev(by_reason.end());
    }
    same->second.push_back(plan.hosts[h].name);
  }
  constexpr std::size_t k_named = 3;
  for (const auto& [why, hosts] : by_reason) {
    std::string names;
    for (std::size_t i = 0; i < hosts.size() && i < k_named; ++i) {
      names += (i == 0 ? "" : ", ") + hosts[i];
    }
    if (hosts.size() > k_named) {
      names = fmt::format("{} hosts ({} and {} more)", hosts.size(), names, hosts.size() - k_named);
    }
    spdlog::warn("{}: no interface toward rank 0 ({}): {}; GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME and "
                 "HOROVOD_GLOO_IFACE are not set there",
                 names, target, why);
  }
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
  auto found = interfaces_toward(backend, plan.hosts, target);
  if (stop::requested()) {
    return fail(stop::error("probing each host's network interface"));
  }
  log_interfaces(plan, found);
  warn_hosts_without_interface(plan, found, target);
  return found;
}

Result<std::vector<HostTopology>> job_topologies(const JobSpec& job, Backend& backend, const Plan& plan) {
  if (job.launch.bind == CpuBind::none) {
    return std::vector<HostTopology>{};
  }
  auto found = backend.read_topology(plan.hosts);
  if (stop::requested()) {
    return fail(stop::error("reading each host's CPU topology"));
  }
  for (std::size_t h = 0; h < found.size() && h < plan.hosts.size(); ++h) {
    if (!found[h].known()) {
      spdlog::warn("{}: cannot read the CPU topology ({}); its ranks run unbound", plan.hosts[h].name, found[h].why);
    }
  }
  return found;
}

std::string container_tag() {
  std::random_device random;
  return fmt::format("{:08x}", random());
}

Result<PlannedJob> plan_job(const JobSpec& job) {
  PhaseTimer finding("hosts");
  auto selected = select_backend(job);
  if (!selected) {
    return fail(selected.error());
  }
  PlannedJob planned{std::move(selected->backend), std::move(selected->why), {}};
  if (auto problem = container_backend_problem(job, planned.backend->name())) {
    return fail(ExitCode::usage, *problem);
  }
  auto hosts = hosts_for_plan(job, *planned.backend, std::move(selected->hosts));
  if (!hosts) {
    return fail(hosts.error());
  }
  finding.end();
  PhaseTimer planning("plan");
  auto plan = make_plan(job, *hosts);
  if (!plan) {
    return fail(plan.error());
  }
  if (auto fits = check_backend_for_plan(job, *planned.backend, *plan); !fits) {
    return fail(fits.error());
  }
  planned.plan = std::move(*plan);
  planned.hosts = std::move(*hosts);
  if (stop::requested()) {
    return fail(stop::error("planning the job"));
  }
  log_plan_hosts(planned);
  return planned;
}

LaunchContext preview_context(const JobSpec& job, const PlannedJob& planned) {
  LaunchContext ctx;
  ctx.master_port = job.torch.master_port;
  ctx.backend = backend_shown(planned);
  ctx.horovod_gloo = uses_horovod_gloo(job, planned.backend->starts_mpi_world());
  ctx.container_tag = container_tag();
  ctx.singleton_guard = wants_singleton_guard(job, *planned.backend, planned.plan);
  if (wants_error_dir(job, *planned.backend)) {
    ctx.error_dir = job.log_dir.empty() ? "<error-dir>" : job.log_dir;
  }
  return ctx;
}

bool wants_singleton_guard(const JobSpec& job, const Backend& backend, const Plan& plan) {
  return plan.world_size > 1 && backend.starts_ranks_alone() && job.mpi.launch != MpiLaunch::pmix;
}

std::string backend_shown(const PlannedJob& planned) {
  const std::string name(planned.backend->name());
  return planned.backend_why.empty() ? name : name + " (" + planned.backend_why + ")";
}

RankPlace rank_place(const Backend& backend) {
  return backend.ranks_are_local() ? RankPlace::this_machine : RankPlace::remote;
}

namespace {

// One plan's launch: its context (master port, interfaces, rendezvous) and
// rendezvous. An elastic restart on fewer hosts starts a new round.
struct Round {
  Plan plan;
  LaunchContext ctx;
  std::unique_ptr<rendezvous::JobRendezvous> rendezvous;
  std::shared_ptr<ProgressBoard> progress;  // the hang watchdog's, when [watchdog] is on
};

// The master port a round may keep: the previous round's when rank 0 stays
// on the same host (the port is this job's own, maybe still in TIME_WAIT).
struct KeptPort {
  std::string host;
  int port = 0;
};

Result<std::unique_ptr<Round>> start_round(const JobSpec& job, Backend& backend, Plan plan,
                                           const std::string& error_dir, const std::string& token,
                                           const KeptPort& kept = {}) {
  auto round = std::make_unique<Round>();
  round->plan = std::move(plan);
  LaunchContext& ctx = round->ctx;
  // Interfaces first: the ssh backend's shell on rank 0's host also reads
  // the ports in use there, for the master port.
  auto interfaces = job_interfaces(job, backend, round->plan);
  if (!interfaces) {
    return fail(interfaces.error());
  }
  ctx.interfaces = std::move(*interfaces);
  auto topologies = job_topologies(job, backend, round->plan);
  if (!topologies) {
    return fail(topologies.error());
  }
  ctx.topologies = std::move(*topologies);
  ctx.container_tag = container_tag();
  if (!kept.host.empty() && kept.host == round->plan.hosts.front().name) {
    ctx.master_port = kept.port;
  } else {
    auto master_port = launch_master_port(job, backend, round->plan);
    if (!master_port) {
      return fail(master_port.error());
    }
    ctx.master_port = *master_port;
  }
  ctx.error_dir = error_dir;
  // Before any rank: its address and the token go into every rank's env.
  ctx.horovod_gloo = uses_horovod_gloo(job, backend.starts_mpi_world());
  ctx.singleton_guard = wants_singleton_guard(job, backend, round->plan);
  // The hang watchdog's board: the ranks' lines and heartbeats feed it.
  if (job.watchdog.enabled()) {
    round->progress = std::make_shared<ProgressBoard>(round->plan.world_size, job.watchdog);
  }
  auto on_heartbeat = [progress = round->progress](int rank) {
    if (progress) {
      progress->heartbeat(rank);
    }
  };
  auto rendezvous = rendezvous::JobRendezvous::start(job, round->plan, backend.ranks_are_local(), ctx.horovod_gloo,
                                                     token, on_heartbeat);
  if (!rendezvous) {
    return fail(rendezvous.error());
  }
  round->rendezvous = std::move(*rendezvous);
  ctx.rendezvous = round->rendezvous->endpoint();
  ctx.token = round->rendezvous->token();
  ctx.horovod_address = round->rendezvous->horovod_address();
  ctx.horovod_port = std::to_string(round->rendezvous->horovod_port());
  log_ports(ctx);
  return round;
}

// Elastic: `hosts` without the excluded ones and without those failing the
// backend's preflight (excluded now). False when that passes max_host_losses.
bool usable_hosts(Backend& backend, Inventory& hosts, RestartPolicy& policy) {
  std::erase_if(hosts, [&](const Host& host) { return policy.is_excluded(host.name); });
  auto problems = backend.preflight(hosts);
  bool within_limit = true;
  for (std::size_t i = 0; i < hosts.size() && i < problems.size(); ++i) {
    if (!problems[i].empty()) {
      within_limit = policy.exclude(hosts[i].name, problems[i]) && within_limit;
    }
  }
  std::erase_if(hosts, [&](const Host& host) { return policy.is_excluded(host.name); });
  return within_limit;
}

// The plan on the usable hosts, or why there is none ("" plan on success).
Result<Plan> elastic_plan(const JobSpec& job, Backend& backend, Inventory hosts, RestartPolicy& policy) {
  if (!usable_hosts(backend, hosts, policy)) {
    return fail(ExitCode::launch, policy.too_many_losses());
  }
  if (stop::requested()) {
    return fail(stop::error("checking the hosts"));
  }
  if (hosts.empty()) {
    return fail(ExitCode::launch, "no host left");
  }
  auto plan = make_plan(job, hosts);
  if (!plan) {
    return fail(ExitCode::launch, plan.error().message);
  }
  return plan;
}

} // namespace

Result<int> launch_job(const JobSpec& job, PlannedJob& planned, const LaunchOptions& options,
                       const AfterRanks& after_ranks) {
  Backend& backend = *planned.backend;
  RestartPolicy policy(restart_rules(job, options.max_restarts));
  if (policy.elastic()) {
    auto plan = elastic_plan(job, backend, planned.hosts, policy);
    if (!plan) {
      return fail(plan.error().code, "cannot start: " + plan.error().message);
    }
    planned.plan = std::move(*plan);
  }
  ErrorDir error_dir;
  if (auto made = error_dir.make(job, backend); !made) {
    return fail(made.error());
  }
  PhaseTimer connecting("connect");
  auto first = start_round(job, backend, planned.plan, error_dir.path(), {});
  connecting.end();
  if (!first) {
    return fail(first.error());
  }
  std::unique_ptr<Round> round = std::move(*first);
  SupervisorOptions supervisor;
  supervisor.timeout = job.timeout;
  supervisor.deadline = stop::deadline();
  supervisor.max_restarts = options.max_restarts;
  supervisor.grace = job.grace;
  supervisor.output = options.output;
  supervisor.output.secrets = {round->ctx.token};  // never printed, logged or sent as an event
  supervisor.watchdog = [&] { return round->rendezvous->overdue(); };
  supervisor.policy = &policy;
  supervisor.stop = job.stop;
  supervisor.hang = job.watchdog;
  supervisor.progress = round->progress;
  supervisor.job_ending_rank = tf_job_ending_rank(job, round->plan);
  auto live = options.live ? start_live(job, planned, options.output.host_ranks) : nullptr;
  if (live) {
    attach_live(*live, supervisor);
  }
  const RankPlace place = rank_place(backend);
  auto build = [&](int attempt) -> Result<std::vector<RankLaunch>> {
    round->rendezvous->begin_attempt(attempt);
    LaunchContext attempt_ctx = round->ctx;
    attempt_ctx.attempt = attempt;
    std::vector<RankLaunch> launches = build_launches(job, round->plan, attempt_ctx, place, environ);
    log_rank_launches(launches, {round->ctx.token});
    return launches;
  };
  // One plan on the hosts left, its round started and the backend prepared;
  // a host the backend cannot reach after its preflight is lost (`unreached`).
  auto replan_once = [&](int attempt, RestartPolicy& rules,
                         std::vector<LeftOutHost>& unreached) -> Result<NextRound> {
    auto hosts = hosts_for_plan(job, backend);
    if (!hosts) {
      return NextRound{nullptr, {}, "the host source failed: " + hosts.error().message};
    }
    auto plan = elastic_plan(job, backend, std::move(*hosts), rules);
    if (!plan) {
      if (stop::is_stop_error(plan.error())) {
        return fail(plan.error());
      }
      return NextRound{nullptr, {}, plan.error().message};
    }
    const std::string token = round->ctx.token;
    const KeptPort kept{round->plan.hosts.front().name, round->ctx.master_port};
    round.reset();  // the old rendezvous' port is free again
    PhaseTimer reconnecting(attempt == 0 ? std::string("connect") : fmt::format("connect (attempt {})", attempt));
    auto next = start_round(job, backend, std::move(*plan), error_dir.path(), token, kept);
    reconnecting.end();
    if (!next) {
      return fail(next.error());
    }
    round = std::move(*next);
    supervisor.progress = round->progress;  // sized for the new plan; supervise() reads it per attempt
    auto launches = build(attempt);
    if (!launches) {
      return fail(launches.error());
    }
    PhaseTimer preflight(attempt == 0 ? std::string("preflight") : fmt::format("preflight (attempt {})", attempt));
    if (auto prepared = backend.prepare(round->plan, *launches); !prepared) {
      unreached = stop::is_stop_error(prepared.error()) ? std::vector<LeftOutHost>{} : backend.unreached_hosts();
      return fail(prepared.error());
    }
    return NextRound{&round->plan, std::move(*launches), {}};
  };
  // Each pass leaves out at least one host, so this ends.
  supervisor.replan = [&](int attempt, RestartPolicy& rules) -> Result<NextRound> {
    while (true) {
      std::vector<LeftOutHost> unreached;
      auto next = replan_once(attempt, rules, unreached);
      if (next || unreached.empty()) {
        return next;
      }
      backend.shutdown();
      if (auto why = rules.exclude_lost(unreached)) {
        return NextRound{nullptr, {}, *why};
      }
    }
  };
  auto code = supervise(backend, round->plan, build, supervisor);
  PhaseTimer shutting_down("shut down");
  backend.shutdown();
  shutting_down.end();
  if (live) {
    live->finished(code ? *code : to_int(code.error().code));
  }
  if (after_ranks && round) {
    after_ranks(round->rendezvous->server());
  }
  return code;
}

} // namespace ddl::cmd
