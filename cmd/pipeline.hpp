// SPDX-License-Identifier: MIT
#pragma once

// The one way a job is planned and launched: `ddl run` and `ddl bench`
// (and `render`/`hosts` for the planning half) all go through here, so that
// every run rule (rendezvous and its exit-4 timeout, master port, gang
// supervision, shutdown) holds for each of them.

#include <functional>
#include <memory>

#include "rendezvous/server.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/launch/backend.hpp"
#include "src/launch/output.hpp"
#include "src/plan/plan.hpp"

namespace ddl::cmd {

// The job's backend and the rank plan on its hosts.
struct PlannedJob {
  std::unique_ptr<Backend> backend;
  std::string backend_why;  // how auto chose it; "" when the job named it
  Plan plan;
  Inventory hosts{};        // every host found, before placement
};

// The backend that runs the job (select_backend: auto chosen, mismatches
// refused), its hosts (the host pipeline, src/launch/plan_hosts.hpp) and
// the rank plan on them.
Result<PlannedJob> plan_job(const JobSpec& job);

// "ssh (auto: host 'a' is not this machine)" or "ssh": the backend as the
// plan table shows it.
std::string backend_shown(const PlannedJob& planned);

// The MPI singleton guard goes into every rank's env (more than one rank,
// each started alone: src/render/frameworks/mpi.hpp).
bool wants_singleton_guard(const JobSpec& job, const Backend& backend, const Plan& plan);

// What `run --dry-run` and `render` show for a launch that does not happen:
// placeholders for what only a launch finds (a free master port, the
// rendezvous, the error-file folder), the backend as chosen.
LaunchContext preview_context(const JobSpec& job, const PlannedJob& planned);

// The address of rank 0's host: what MASTER_ADDR names and what every host's
// interface is chosen toward.
std::string rank0_address(const Plan& plan);

// Per plan host, the interface toward rank 0's address, found through the
// backend on each host. Empty when the user sets every one of
// k_interface_variables (job.env, -x, env_pass) or the backend does not
// look. Hosts where none was found are logged as warnings; a stop (Ctrl-C,
// the deadline) while probing is an error.
Result<std::vector<HostInterface>> job_interfaces(const JobSpec& job, Backend& backend, const Plan& plan);

// [launch] bind: per plan host, its CPU topology read through the backend
// on the host itself; empty with bind none. A host that cannot be read is
// said once (a warning) and its ranks run unbound; a stop while reading is
// an error.
Result<std::vector<HostTopology>> job_topologies(const JobSpec& job, Backend& backend, const Plan& plan);

// A fresh last word for the names of one launch's containers (8 hex digits).
std::string container_tag();

// Where the backend runs ranks, for what of the launcher's env they get.
RankPlace rank_place(const Backend& backend);

struct LaunchOptions {
  OutputOptions output;
  int max_restarts = 0;
  bool live = true;  // a control socket for ddl ps, logs, stop and signal
};

// Called once the ranks are gone, while the rendezvous still holds what they
// left there (bench reads rank 0's results).
using AfterRanks = std::function<void(rendezvous::Server&)>;

// Launches the planned job: the master port, the job rendezvous (a fresh
// token; exit 4 when its timeout passes), every attempt's launches, the gang
// supervised to its end, then the backend shut down. Elastic ([launch]
// min_np): hosts failing the preflight are left out first, and a restart
// re-runs the host source and plans again without the excluded hosts.
// Returns the job's exit code, or ddl's own error.
Result<int> launch_job(const JobSpec& job, PlannedJob& planned, const LaunchOptions& options,
                       const AfterRanks& after_ranks = {});

} // namespace ddl::cmd
