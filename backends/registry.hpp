// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/launch/backend.hpp"

namespace ddl {

// The backend that runs a job and the hosts it runs on.
struct SelectedBackend {
  std::shared_ptr<Backend> backend;  // shared: the preflight launches its check on the job's own backend
  // The job's host source's, or the backend's own (Kubernetes pods), as
  // found: the first step of the host pipeline (src/launch/plan_hosts.hpp),
  // which does the rest (--include / --exclude, addresses, GPU probe).
  Inventory hosts;
  // Why `auto` chose this backend ("auto: every host is this machine");
  // "" when the job named it.
  std::string why;
};

// The only place that knows every backend and chooses one. [launch] backend
// = "auto" (the default) takes mpirun for the mpi framework or a program
// that links an MPI library (mpi_program), unless mpi.launch is "pmix"
// (then as for any job), kubernetes for
// a [kubernetes] selector with no other host source, slurm when the hosts are
// the Slurm allocation ddl runs in, local when every host
// is this machine (net::is_this_machine), else ssh. Errors (ExitCode::usage):
// backend local with a host that is not this machine (named), and local, ssh
// or kubernetes with the mpi framework and mpi.launch "mpirun" (each rank
// would be an MPI singleton), backend mpirun with mpi.launch "pmix",
// backend slurm outside a Slurm allocation (SLURM_JOB_ID unset).
Result<SelectedBackend> select_backend(const JobSpec& job);

// mpi.launch "auto" proves pmix only where ddl starts its PMIx host workers
// on hosts it reaches itself: backend local or ssh, named, or what `auto`
// picks before looking at the hosts (the mpi framework or an MPI program:
// mpirun; a [kubernetes] selector; the Slurm allocation ddl runs in). Why
// `job` (its mpi.launch read as "pmix") is not such a job; "" when it is.
std::string pmix_auto_backend_problem(const JobSpec& job);

// Once the plan is known: a program that links an MPI library
// (mpi_program) with more than one rank on a backend that starts each rank
// alone (local, ssh, kubernetes) is an error (ExitCode::usage) that says
// what to write instead; `auto` picks mpirun for it before this.
Result<void> check_backend_for_plan(const JobSpec& job, const Backend& backend, const Plan& plan);

// The backend with which `ddl rsh`, mpirun's rsh agent, runs one command on
// a host: ssh, or kubectl exec into the pod, as the launcher's
// DDL_RSH_TRANSPORT `word` says (transport_of_word).
std::unique_ptr<Backend> rsh_backend(const JobSpec& job, std::string_view word);

} // namespace ddl
