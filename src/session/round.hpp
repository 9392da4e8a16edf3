// SPDX-License-Identifier: MIT
#pragma once

// A round: one plan's launch context and rendezvous. The first attempt
// starts one; an elastic restart on fewer hosts starts the next
// (JobRounds::next_round), which supervise() asks for through the Rounds
// interface (src/launch/supervisor.hpp).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rendezvous/launcher.hpp"
#include "src/job/job.hpp"
#include "src/launch/backend.hpp"
#include "src/launch/restart_policy.hpp"
#include "src/launch/supervisor.hpp"
#include "src/launch/watchdog.hpp"
#include "src/plan/plan.hpp"
#include "src/render/launches.hpp"

namespace ddl::session {

// The master port a round may keep: the previous round's when rank 0 stays
// on the same host (the port is this job's own, maybe still in TIME_WAIT).
struct KeptPort {
  std::string host;
  int port = 0;
};

// What a round is made from besides its plan.
struct RoundInputs {
  const JobSpec& job;
  Backend& backend;
  std::string error_dir;  // the ranks' TORCHELASTIC_ERROR_FILE folder, "" for none
  std::string token;      // "" for a fresh one (the first round)
  KeptPort kept;
};

struct Round {
  Plan plan;
  LaunchContext ctx;
  std::unique_ptr<rendezvous::JobRendezvous> rendezvous;
  std::shared_ptr<ProgressBoard> progress;  // the hang watchdog's, when [watchdog] is on

  // Starts a round on `plan` in five steps, in this order (round.cpp,
  // k_round_steps): (1) each host's interface toward rank 0 (the ssh
  // backend's shell on rank 0's host also reads the ports in use there, for
  // step 3), (2) each host's CPU topology, (3) the master port (the kept one,
  // else one checked on rank 0's host), (4) the context that needs no host
  // (container tag, error folder, Horovod's gloo, the MPI singleton guard),
  // (5) the hang board and the rendezvous, whose address and token go into
  // every rank's env.
  static Result<std::unique_ptr<Round>> start(const RoundInputs& in, Plan plan);
};

// The backend's preflight answers already had, by host name ("" reached).
using ReachAnswers = std::map<std::string, std::string, std::less<>>;

// Elastic: `hosts` without the excluded ones and those failing the backend's
// preflight (excluded now; a host in `known` is not asked again), planned;
// why not when that passes max_host_losses or leaves no host.
Result<Plan> elastic_plan(const JobSpec& job, Backend& backend, Inventory hosts, RestartPolicy& policy,
                          const ReachAnswers& known = {});

// The rounds of one job as supervise() asks for them: the current round's
// plan, each attempt's launches, the rendezvous' deadline, the hang board;
// next_round re-runs the host source and plans again without the hosts lost.
class JobRounds final : public Rounds {
public:
  JobRounds(const JobSpec& job, Backend& backend, std::string error_dir, std::unique_ptr<Round> first);

  const Plan& plan() const override { return round_->plan; }
  Result<std::vector<RankLaunch>> launches(int attempt) override;
  Result<NextRound> next_round(int attempt, RestartPolicy& policy) override;
  std::optional<Error> overdue() override { return round_->rendezvous->overdue(); }
  ProgressBoard* progress() override { return round_->progress.get(); }

  // The round now running; nullptr once a next_round failed.
  Round* current() { return round_.get(); }

private:
  Result<NextRound> replan_once(int attempt, RestartPolicy& policy, std::vector<LeftOutHost>& unreached);

  const JobSpec& job_;
  Backend& backend_;
  std::string error_dir_;
  RankPlace place_;
  std::unique_ptr<Round> round_;
};

} // namespace ddl::session
