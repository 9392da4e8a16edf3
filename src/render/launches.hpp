// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "src/util/error.hpp"
#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render.hpp"

namespace ddl {

// Everything needed to start one rank.
struct RankLaunch {
  int rank = 0;
  Host host;
  std::vector<std::string> argv;  // with command_is_shell: {"/bin/sh","-c",cmd}
  std::string workdir;
  EnvList env;                    // the complete environment of the rank
  Millis grace{10'000};
};

// The variables a login on this machine would give a process (PATH, HOME,
// USER, LOGNAME, SHELL, LANG, LC_*, TZ, TERM, TMPDIR), taken from the
// launcher's environment: the base environment of local ranks, the same
// that an ssh login gives remote ranks.
EnvList local_login_env(char** environ_ptr);

// Later entries win; the order of first appearance is kept.
EnvList merge_env(const std::vector<const EnvList*>& layers);

// Every rank's launch for one attempt: argv (a string command runs under
// /bin/sh -c), workdir (default: the launcher's cwd), grace, and the env:
// `base`, then env_pass, then what ddl sets (rank_env) on top.
std::vector<RankLaunch> build_launches(const JobSpec& job, const Plan& plan, const LaunchContext& ctx,
                                       const EnvList& base, char** environ_ptr);

} // namespace ddl
