// SPDX-License-Identifier: MIT
#pragma once

// torch's rules (torchrun's contract): its variables, its store on
// torch.master_port (free ports looked for; 29500 where the backend cannot
// look), NCCL's async error handling and the per-rank error files.

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render_env.hpp"

namespace ddl {

// torch's default port, where the backend cannot look for a free one.
inline constexpr int k_torch_default_port = 29500;

// How many consecutive ports from torch.master_port the job's frameworks
// take on rank 0's host: torch's store, and JAX's coordinator after it
// (jax.hpp); 0 when it uses neither.
int master_ports_needed(const JobSpec& job);

// Whether ddl gives torch ranks a TORCHELASTIC_ERROR_FILE: for ranks on this
// machine (`ranks_are_local`), whose files it reads back, unless the user
// sets one.
bool wants_error_files(const JobSpec& job, bool ranks_are_local);

// MASTER_ADDR, MASTER_PORT, RANK, ..., TORCHELASTIC_*, OMP_NUM_THREADS and
// torchrun's defaults (NCCL async error handling, the error file).
void add_torch_env(EnvList& env, const JobSpec& job, const Plan& plan, const RankView& r, const LaunchContext& ctx);

} // namespace ddl
