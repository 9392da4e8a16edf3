// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

#include "src/plan/plan.hpp"
#include "src/util/error.hpp"

namespace ddl {

// mpi.launch = "pmix" (issue 33): the gang ddl starts and supervises is one
// `ddl worker pmix-host` per host of the rank plan, each starting that host's
// MPI ranks under its PMIx server. `plan` is that gang (rank h is host h, in
// the order of the MPI ranks; each holds the GPUs of its host's ranks) and
// `ranks` each host's MPI rank count, so that MPI rank r runs where the rank
// plan put it.
struct PmixHosts {
  Plan plan;
  std::vector<int> ranks;
};

// Errors (ExitCode::usage): a host whose ranks are not adjacent in the rank
// plan (MPI ranks fill hosts in order).
Result<PmixHosts> pmix_hosts(const Plan& ranks);

} // namespace ddl
