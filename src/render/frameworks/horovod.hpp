// SPDX-License-Identifier: MIT
#pragma once

// Horovod's rules: its variables, and its gloo mode (horovodrun's HTTP
// rendezvous, the gloo controller and CPU operations) where the ranks form
// no MPI world.

#include <string_view>

#include "src/job/job.hpp"
#include "src/render/render_env.hpp"

namespace ddl {

// Whether the job's Horovod ranks need Horovod's gloo rendezvous: horovod
// is among its frameworks and the backend forms no MPI world.
bool uses_horovod_gloo(const JobSpec& job, bool starts_mpi_world);

// HOROVOD_RANK, ..., HOROVOD_HOSTNAME; with ctx.horovod_gloo also the gloo
// rendezvous, controller, CPU operations and timeout.
void add_horovod_env(EnvList& env, const JobSpec& job, const RankView& r, const LaunchContext& ctx);

// The gloo defaults that a value from env_pass keeps (is_user_overridable_default).
bool is_horovod_default(std::string_view name);

} // namespace ddl
