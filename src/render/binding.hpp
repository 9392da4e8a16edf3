// SPDX-License-Identifier: MIT
#pragma once

// [launch] bind (issue 31): which CPUs each rank is pinned to, decided from
// its host's topology (LaunchContext::topologies), its local rank and its
// GPUs. The backends apply it before the program starts (RankLaunch::cpus):
// the local backend pins the forked child, a remote host runs the program
// under `ddl pin` (pinned_argv).

#include <string>
#include <vector>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render_env.hpp"

namespace ddl {

struct RankBinding {
  std::vector<int> cpus;  // empty: unbound
  std::string why;        // how they were chosen, or why the rank runs unbound
};

// The binding of `rank`:
//   core: the host's CPUs (node by node) split into local_size shares, one
//         more to the first ranks when they do not divide evenly; with more
//         ranks than CPUs, ranks share one each, round robin;
//   numa: the host's NUMA nodes dealt to its ranks in blocks (local ranks
//         0..k/n-1 on the first node, ...); a host with none is one node;
//   gpu:  the NUMA node of the rank's first GPU; a rank without a GPU, or a
//         GPU of unknown node, is bound as numa (and why says so).
// Unbound when bind is none or the host's topology is unknown.
RankBinding rank_binding(const JobSpec& job, const Plan& plan, int rank, const LaunchContext& ctx);

// OMP_NUM_THREADS for a bound rank: its CPU count, unless the user sets the
// variable ([job] env, env_file, its host_env, -x, env_pass, or the
// launcher's own OMP_NUM_THREADS, which torch's rule passes on).
void set_bound_threads(EnvList& env, const JobSpec& job, const Host& host, const RankBinding& binding);

// What `run --dry-run` prints after the plan with bind set: per rank its
// host, CPUs and why; per host whose topology is unknown, why. "" with bind
// none.
std::string bindings_text(const JobSpec& job, const Plan& plan, const LaunchContext& ctx);

// `argv` run pinned to `cpus` by `ddl` on a host where ddl cannot fork the
// rank itself: {ddl, "pin", "0-3", "--", argv...}; argv itself when unbound.
std::vector<std::string> pinned_argv(const std::vector<std::string>& argv, const std::vector<int>& cpus,
                                     const std::string& ddl);

} // namespace ddl
