// SPDX-License-Identifier: MIT
#include "src/render/frameworks/horovod.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace ddl {

namespace {

// What horovodrun sets for its gloo mode: the HTTP rendezvous, the gloo
// controller and CPU operations, and its timeout (ddl's rendezvous timeout).
void add_gloo(EnvList& env, const JobSpec& job, const LaunchContext& ctx) {
  env.emplace_back("HOROVOD_GLOO_RENDEZVOUS_ADDR", bracket_ipv6(ctx.horovod_address));
  env.emplace_back("HOROVOD_GLOO_RENDEZVOUS_PORT", ctx.horovod_port);
  env.emplace_back("HOROVOD_CONTROLLER", "gloo");
  env.emplace_back("HOROVOD_CPU_OPERATIONS", "gloo");
  const auto seconds = (job.rendezvous.timeout.count() + 999) / 1000;
  env.emplace_back("HOROVOD_GLOO_TIMEOUT_SECONDS", std::to_string(std::max<long long>(seconds, 1)));
}

} // namespace

bool uses_horovod_gloo(const JobSpec& job, bool starts_mpi_world) {
  return uses_framework(job, Framework::horovod) && !starts_mpi_world;
}

void add_horovod_env(EnvList& env, const JobSpec& job, const RankView& r, const LaunchContext& ctx) {
  env.emplace_back("HOROVOD_RANK", std::to_string(r.slot.rank));
  env.emplace_back("HOROVOD_SIZE", std::to_string(r.world));
  env.emplace_back("HOROVOD_LOCAL_RANK", std::to_string(r.slot.local_rank));
  env.emplace_back("HOROVOD_LOCAL_SIZE", std::to_string(r.slot.local_size));
  env.emplace_back("HOROVOD_CROSS_RANK", std::to_string(r.slot.cross_rank));
  env.emplace_back("HOROVOD_CROSS_SIZE", std::to_string(r.slot.cross_size));
  env.emplace_back("HOROVOD_HOSTNAME", r.host.name);
  if (ctx.horovod_gloo) {
    add_gloo(env, job, ctx);
  }
}

bool is_horovod_default(std::string_view name) {
  constexpr std::array<std::string_view, 3> defaults = {"HOROVOD_CONTROLLER", "HOROVOD_CPU_OPERATIONS",
                                                        "HOROVOD_GLOO_TIMEOUT_SECONDS"};
  return std::ranges::find(defaults, name) != defaults.end();
}

} // namespace ddl
