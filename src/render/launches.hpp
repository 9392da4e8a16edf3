// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"
#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/render/render_env.hpp"

namespace ddl {

// Everything needed to start one rank.
struct RankLaunch {
  int rank = 0;
  Host host;
  std::vector<std::string> argv;  // with command_is_shell: {"/bin/sh","-c",cmd}
  std::string workdir;            // [job] workdir, else the launcher's cwd
  // True when the job named no workdir (`workdir` is then the launcher's
  // cwd): backends whose ranks have a home of their own (a pod's, mpirun's)
  // may start them there instead.
  bool workdir_is_default = false;
  EnvList env;                    // the complete environment of the rank
  Millis grace{10'000};
  // [launch] bind: the CPUs the program is pinned to before it starts
  // (src/render/binding.hpp); empty: unbound.
  std::vector<int> cpus;
  // --stdin: this rank reads ddl's stdin (src/launch/stdin_feed.hpp); else
  // its stdin is /dev/null.
  bool reads_stdin = false;
};

// The variables a login on this machine would give a process (PATH, HOME,
// USER, LOGNAME, SHELL, LANG, LC_*, TZ, TERM, TMPDIR), taken from the
// launcher's environment: the base environment of local ranks, the same
// that an ssh login gives remote ranks.
EnvList local_login_env(char** environ_ptr);

// Later entries win; the order of first appearance is kept.
EnvList merge_env(const std::vector<const EnvList*>& layers);

// Where the ranks run, which decides what of the launcher's environment
// reaches them.
enum class RankPlace { this_machine, remote };

// The launcher's variables a rank gets, the one rule for every backend:
// local ranks start from local_login_env, then env_pass; remote ranks get
// env_pass only, and never the launcher's own PATH, HOME, USER, ... (which
// would break the remote login's) unless [job] env, -x or env_pass names
// them literally.
EnvList launcher_env(const JobSpec& job, RankPlace place, char** environ_ptr);

// True for the variables of the launcher's login that must not override a
// remote host's own (PATH, HOME, USER, LOGNAME, SHELL, TMPDIR, TERM, PWD,
// OLDPWD, SHLVL, _).
bool is_launcher_only(std::string_view name);

// Every rank's launch for one attempt: argv (a string command runs under
// /bin/sh -c; then wrapped by [job] setup and [container], see
// src/render/container.hpp), workdir (default: the launcher's cwd), grace,
// its CPUs ([launch] bind), and the env: launcher_env, then what ddl sets
// (rank_env) on top, except the defaults that env_pass already gives
// (is_user_overridable_default); with [container], local ranks' runtime
// clients also get runtime_client_env.
std::vector<RankLaunch> build_launches(const JobSpec& job, const Plan& plan, const LaunchContext& ctx,
                                       RankPlace place, char** environ_ptr);

} // namespace ddl
