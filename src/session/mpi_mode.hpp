// SPDX-License-Identifier: MIT
#pragma once

// `ddl run --mpi pmix` (mpi.launch = "pmix", issue 33) on the backends that
// start ranks themselves (local, ssh, kubernetes): the job's MPI ranks as one
// world with no mpirun, ddl hosting a PMIx server on each host.

#include "src/session/planned_job.hpp"
#include "src/job/job.hpp"
#include "src/pmix/world_view.hpp"

namespace ddl::session {

// What adopt_pmix_launch answers: the job and plan as launched.
struct PmixLaunch {
  bool adopted = false;        // the gang is one pmix-host worker per host
  std::vector<int> host_ranks;  // each host's MPI rank count, in gang order
  JobSpec job;                 // adopted: the job whose command is the host worker
  Plan gang;                   // adopted: one rank per host (src/plan/pmix_hosts.hpp)
};

// How mpi.launch auto was resolved: the launch, and why ("" for another
// mpi.launch, which stays as it is).
struct MpiChoice {
  MpiLaunch launch = MpiLaunch::mpirun;
  std::string why;
};

// mpi.launch = "auto": pmix where it is proven, else mpirun, and why (for
// the backend's line). pmix needs all
// of: the job's program links Open MPI's libmpi.so.40 (its ELF DT_NEEDED),
// this machine can host a PMIx server (libpmix), and the backend is local or
// ssh (named, or what auto picks from the hosts). Anything else is mpirun, as
// before: its own rules then choose backend mpirun or refuse (a backend
// that would start MPI singletons is exit 2). Another mpi.launch: itself.
MpiChoice resolve_mpi_launch(const JobSpec& job);

// `job` with its mpi.launch as `choice` says; the choice's reason logged
// (-v). What run, render and hosts plan on, so that they make one choice.
JobSpec with_mpi_choice(const JobSpec& job, const MpiChoice& choice);

// plan_job on with_mpi_choice(job, resolve_mpi_launch(job)) (`resolved`
// gets that job); the reason joins the backend's.
Result<PlannedJob> plan_mpi_job(const JobSpec& job, JobSpec& resolved);

// The planned MPI job's PMIx launch: the gang becomes one
// `ddl worker pmix-host` per host of the plan (src/plan/pmix_hosts.hpp), each
// starting its host's share of the job's ranks, with the job's command; MPI
// rank r runs where the plan put rank r, and its output lines start "[r] ".
// The job's frameworks render nothing (the MPI library gives each rank its
// place; ddl's DDL_RANK and friends come from the worker). Under backend
// slurm nothing changes (srun --mpi=pmix starts the ranks; the registry adds
// it). Errors (ExitCode::usage): no PMIx library on this machine for the
// local backend (what to install is named), elastic launch.min_np.
// The job and plan themselves stay as they are.
Result<PmixLaunch> adopt_pmix_launch(const JobSpec& job, const PlannedJob& planned);

// The MPI world of an adopted launch as --dry-run shows it: each host's PMIx
// name as its worker will pick it where ddl can tell (this machine's
// hostname; another host by its name in the plan), made unique as the
// workers make them.
pmix::WorldView pmix_world_view(const JobSpec& job, const Plan& gang, const PmixLaunch& launch);

} // namespace ddl::session
