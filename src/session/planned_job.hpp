// SPDX-License-Identifier: MIT
#pragma once

// The planning half of a run: the backend, its hosts and the rank plan, as
// `ddl run`, `bench`, `render`, `hosts`, the personalities and a sweep trial
// all plan (one path: a JobRun's first passes call these same functions).

#include <memory>
#include <string>

#include "backends/registry.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/launch/backend.hpp"
#include "src/plan/plan.hpp"
#include "src/render/launches.hpp"

namespace ddl::session {

// The job's backend and the rank plan on its hosts.
struct PlannedJob {
  std::shared_ptr<Backend> backend;  // shared: the preflight launches its check on the job's own backend
  std::string backend_why;  // how auto chose it; "" when the job named it
  Plan plan;
  Inventory hosts{};        // every host found, before placement
};

// Pass "select backend": the backend that runs the job (auto chosen,
// mismatches refused, a container the backend cannot run refused) and the
// hosts its choice already found.
Result<SelectedBackend> select_job_backend(const JobSpec& job);

// Pass "hosts": the host pipeline (src/launch/plan_hosts.hpp) on what the
// selection found.
Result<Inventory> find_job_hosts(const JobSpec& job, SelectedBackend& selected);

// Pass "plan": the rank plan on `hosts`, checked against the backend; the
// hosts and the backend logged (-v).
Result<PlannedJob> plan_on_hosts(const JobSpec& job, SelectedBackend selected, Inventory hosts);

// The three passes in a row, with the -v phases "hosts" and "plan".
Result<PlannedJob> plan_job(const JobSpec& job);

// "ssh (auto: host 'a' is not this machine)" or "ssh": the backend as the
// plan table shows it.
std::string backend_shown(const PlannedJob& planned);

// The MPI singleton guard goes into every rank's env (more than one rank,
// each started alone: src/render/frameworks/mpi.hpp).
bool wants_singleton_guard(const JobSpec& job, const Backend& backend, const Plan& plan);

// Whether the ranks get a TORCHELASTIC_ERROR_FILE folder (torch ranks on
// this machine, whose files ddl reads back).
bool wants_error_dir(const JobSpec& job, const Backend& backend);

// What `run --dry-run` and `render` show for a launch that does not happen:
// placeholders for what only a launch finds (a free master port, the
// rendezvous, the error-file folder), the backend as chosen.
LaunchContext preview_context(const JobSpec& job, const PlannedJob& planned);

// A fresh last word for the names of one launch's containers (8 hex digits).
std::string container_tag();

// Where the backend runs ranks, for what of the launcher's env they get.
RankPlace rank_place(const Backend& backend);

} // namespace ddl::session
