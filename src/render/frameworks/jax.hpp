// SPDX-License-Identifier: MIT
#pragma once

// JAX's rules: its coordinator listens next to torch's store, on
// torch.master_port + 1 (the job reader refuses master_port 65535 with jax
// for that reason), and its variables.

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render_env.hpp"

namespace ddl {

// JAX's coordinator port after torch.master_port.
inline constexpr int k_jax_coordinator_offset = 1;

// JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID, JAX_LOCAL_DEVICE_IDS.
void add_jax_env(EnvList& env, const JobSpec& job, const Plan& plan, const RankView& r, const LaunchContext& ctx);

} // namespace ddl
