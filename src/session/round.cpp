// SPDX-License-Identifier: MIT
#include "src/session/round.hpp"

#include <fmt/core.h>

#include "src/launch/plan_hosts.hpp"
#include "src/render/frameworks/horovod.hpp"
#include "src/session/host_probes.hpp"
#include "src/session/planned_job.hpp"
#include "src/session/verbose.hpp"
#include "src/util/phase_timer.hpp"
#include "src/util/signals.hpp"

extern char** environ;

namespace ddl::session {

namespace {

// Step 1: each host's interface toward rank 0.
Result<void> find_interfaces(const RoundInputs& in, Round& round) {
  auto interfaces = job_interfaces(in.job, in.backend, round.plan);
  if (!interfaces) {
    return fail(interfaces.error());
  }
  round.ctx.interfaces = std::move(*interfaces);
  return {};
}

// Step 2: each host's CPU topology ([launch] bind).
Result<void> read_topologies(const RoundInputs& in, Round& round) {
  auto topologies = job_topologies(in.job, in.backend, round.plan);
  if (!topologies) {
    return fail(topologies.error());
  }
  round.ctx.topologies = std::move(*topologies);
  return {};
}

// Step 3: each host's GPU count ([launch] bind_gpus), where the plan only
// assumed one per slot: a host without GPUs gets none bound.
Result<void> count_gpus(const RoundInputs& in, Round& round) {
  return unbind_absent_gpus(in.job, in.backend, round.plan);
}

// Step 4: the master port, kept while rank 0 stays on its host.
Result<void> choose_master_port(const RoundInputs& in, Round& round) {
  if (!in.kept.host.empty() && in.kept.host == round.plan.hosts.front().name) {
    round.ctx.master_port = in.kept.port;
    return {};
  }
  auto master_port = launch_master_port(in.job, in.backend, round.plan);
  if (!master_port) {
    return fail(master_port.error());
  }
  round.ctx.master_port = *master_port;
  return {};
}

// Step 5: what the launch context holds without asking a host.
Result<void> fill_context(const RoundInputs& in, Round& round) {
  round.ctx.container_tag = container_tag();
  round.ctx.error_dir = in.error_dir;
  round.ctx.horovod_gloo = uses_horovod_gloo(in.job, in.backend.starts_mpi_world());
  round.ctx.singleton_guard = wants_singleton_guard(in.job, in.backend, round.plan);
  return {};
}

// Step 6: the hang board the ranks' lines and heartbeats feed, and the
// rendezvous; its address and token go into every rank's env.
Result<void> start_rendezvous(const RoundInputs& in, Round& round) {
  if (in.job.watchdog.enabled()) {
    round.progress = std::make_shared<ProgressBoard>(round.plan.world_size, in.job.watchdog);
  }
  auto on_heartbeat = [progress = round.progress](int rank) {
    if (progress) {
      progress->heartbeat(rank);
    }
  };
  auto rendezvous = rendezvous::JobRendezvous::start(in.job, round.plan, in.backend.ranks_are_local(),
                                                     round.ctx.horovod_gloo, in.token, on_heartbeat);
  if (!rendezvous) {
    return fail(rendezvous.error());
  }
  round.rendezvous = std::move(*rendezvous);
  LaunchContext& ctx = round.ctx;
  ctx.rendezvous = round.rendezvous->endpoint();
  ctx.token = round.rendezvous->token();
  ctx.horovod_address = round.rendezvous->horovod_address();
  ctx.horovod_port = std::to_string(round.rendezvous->horovod_port());
  return {};
}

// The order is the contract: interfaces first, as the ssh backend's shell on
// rank 0's host also reads the ports in use there, which the master port
// then asks about; the rendezvous last, before any rank.
using RoundStep = Result<void> (*)(const RoundInputs&, Round&);
constexpr RoundStep k_round_steps[] = {find_interfaces, read_topologies, count_gpus, choose_master_port,
                                       fill_context, start_rendezvous};

// The backend's preflight answer for each of `hosts`: from `known`, else asked.
std::vector<std::string> reach_answers(Backend& backend, const Inventory& hosts, const ReachAnswers& known) {
  std::vector<std::string> problems(hosts.size());
  Inventory unknown;
  std::vector<std::size_t> unknown_at;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (auto found = known.find(hosts[i].name); found != known.end()) {
      problems[i] = found->second;
    } else {
      unknown.push_back(hosts[i]);
      unknown_at.push_back(i);
    }
  }
  if (!unknown.empty()) {
    const auto asked = backend.preflight(unknown);
    for (std::size_t k = 0; k < unknown_at.size() && k < asked.size(); ++k) {
      problems[unknown_at[k]] = asked[k];
    }
  }
  return problems;
}

// Elastic: `hosts` without the excluded ones and without those failing the
// backend's preflight (excluded now). False when that passes max_host_losses.
bool usable_hosts(Backend& backend, Inventory& hosts, RestartPolicy& policy, const ReachAnswers& known) {
  std::erase_if(hosts, [&](const Host& host) { return policy.is_excluded(host.name); });
  auto problems = reach_answers(backend, hosts, known);
  bool within_limit = true;
  for (std::size_t i = 0; i < hosts.size() && i < problems.size(); ++i) {
    if (!problems[i].empty()) {
      within_limit = policy.exclude(hosts[i].name, problems[i]) && within_limit;
    }
  }
  std::erase_if(hosts, [&](const Host& host) { return policy.is_excluded(host.name); });
  return within_limit;
}

std::string attempt_phase(std::string_view phase, int attempt) {
  return attempt == 0 ? std::string(phase) : fmt::format("{} (attempt {})", phase, attempt);
}

} // namespace

Result<std::unique_ptr<Round>> Round::start(const RoundInputs& in, Plan plan) {
  auto round = std::make_unique<Round>();
  round->plan = std::move(plan);
  for (RoundStep step : k_round_steps) {
    if (auto done = step(in, *round); !done) {
      return fail(done.error());
    }
  }
  log_ports(round->ctx);
  return round;
}

Result<Plan> elastic_plan(const JobSpec& job, Backend& backend, Inventory hosts, RestartPolicy& policy,
                          const ReachAnswers& known) {
  if (!usable_hosts(backend, hosts, policy, known)) {
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

JobRounds::JobRounds(const JobSpec& job, Backend& backend, std::string error_dir, std::unique_ptr<Round> first)
    : job_(job), backend_(backend), error_dir_(std::move(error_dir)), place_(rank_place(backend)),
      round_(std::move(first)) {}

Result<std::vector<RankLaunch>> JobRounds::launches(int attempt) {
  round_->rendezvous->begin_attempt(attempt);
  LaunchContext attempt_ctx = round_->ctx;
  attempt_ctx.attempt = attempt;
  std::vector<RankLaunch> launches = build_launches(job_, round_->plan, attempt_ctx, place_, environ);
  log_rank_launches(launches, {round_->ctx.token});
  return launches;
}

// One plan on the hosts left, its round started and the backend prepared;
// a host the backend cannot reach after its preflight is lost (`unreached`).
Result<NextRound> JobRounds::replan_once(int attempt, RestartPolicy& policy, std::vector<LeftOutHost>& unreached) {
  auto hosts = hosts_for_plan(job_, backend_);
  if (!hosts) {
    return NextRound{{}, "the host source failed: " + hosts.error().message};
  }
  auto plan = elastic_plan(job_, backend_, std::move(*hosts), policy);
  if (!plan) {
    if (stop::is_stop_error(plan.error())) {
      return fail(plan.error());
    }
    return NextRound{{}, plan.error().message};
  }
  RoundInputs in{job_, backend_, error_dir_, round_->ctx.token,
                 KeptPort{round_->plan.hosts.front().name, round_->ctx.master_port}};
  round_.reset();  // the old rendezvous' port is free again
  PhaseTimer reconnecting(attempt_phase("connect", attempt));
  auto next = Round::start(in, std::move(*plan));
  reconnecting.end();
  if (!next) {
    return fail(next.error());
  }
  round_ = std::move(*next);
  auto launches = this->launches(attempt);
  if (!launches) {
    return fail(launches.error());
  }
  PhaseTimer preflight(attempt_phase("preflight", attempt));
  if (auto prepared = backend_.prepare(round_->plan, *launches); !prepared) {
    unreached = stop::is_stop_error(prepared.error()) ? std::vector<LeftOutHost>{} : backend_.unreached_hosts();
    return fail(prepared.error());
  }
  return NextRound{std::move(*launches), {}};
}

// Each pass leaves out at least one host, so this ends.
Result<NextRound> JobRounds::next_round(int attempt, RestartPolicy& policy) {
  while (true) {
    std::vector<LeftOutHost> unreached;
    auto next = replan_once(attempt, policy, unreached);
    if (next || unreached.empty()) {
      return next;
    }
    backend_.shutdown();
    if (auto why = policy.exclude_lost(unreached)) {
      return NextRound{{}, *why};
    }
  }
}

} // namespace ddl::session
