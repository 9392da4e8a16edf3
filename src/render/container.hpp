// SPDX-License-Identifier: MIT
#pragma once

// What wraps a rank's program (issue 31): [job] setup, and [container]'s
// runtime command. Both are plain argv words, so that every backend starts
// them as it starts any program; no env value is ever among them.

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/job/job.hpp"

namespace ddl {

// `argv` run after [job] `setup` in one shell (bash where there is one, else
// sh), so that what the setup line sets (a venv's PATH) reaches the program;
// a setup line that fails ends the rank with its status and the line
// "ddl: [job] setup failed (exit N): SETUP" on its stderr.
std::vector<std::string> setup_argv(const std::string& setup, const std::vector<std::string>& argv);

// Who a container is for: its name is "ddl-JOB-RANK-aATTEMPT-TAG" (the job
// name cut to what runtimes accept).
struct ContainerRank {
  std::string job;
  int rank = 0;
  int attempt = 0;
  std::string tag;
  std::vector<int> cpus;  // the rank's binding; docker gets it as --cpuset-cpus
};
std::string container_name(const ContainerRank& who);

// `argv` run in [container] on the rank's host:
//   podman/docker: `RUNTIME run --rm --name NAME --network host --ipc host
//     --pid host [GPUs] [-w WORKDIR] [--volume MOUNT]... [--env NAME]...
//     OPTIONS... IMAGE argv...` under a guard (a small sh program) that,
//     from a session of its own, removes the container once the rank's
//     shell and the runtime client are gone however they ended (a killed
//     client does not stop its container). The values of the `names` given
//     by --env come from the client's own environment, never argv. GPUs are
//     the rank's CUDA_VISIBLE_DEVICES (podman: CDI nvidia.com/gpu=N, docker:
//     --gpus), which `env` then numbers from 0 as the container sees them;
//   apptainer: `apptainer exec [--nv] [--bind MOUNT]... [--pwd WORKDIR]
//     OPTIONS... IMAGE argv...` (its env and network are the host's; no
//     container outlives its process);
//   a template: its words with {image} {name} {workdir} {gpus}, argv in
//     place of {command} or after the last word.
std::vector<std::string> container_argv(const JobSpec& job, const ContainerRank& who,
                                        const std::vector<std::string>& argv, EnvList& env,
                                        const std::vector<std::string>& names);

// Variables of the launcher's environment that a runtime client on this
// machine reads for its own settings (XDG_RUNTIME_DIR, CONTAINERS_*,
// DOCKER_*, APPTAINER_*, SINGULARITY_*), given to local ranks' clients but
// not into their containers.
EnvList runtime_client_env(char** environ_ptr);
bool is_runtime_client_variable(std::string_view name);

// Where a backend can run [container]'s ranks (Backend::container_host).
enum class ContainerHost {
  guarded,  // on hosts where ddl's guard removes the container (local, ssh)
  pods,     // nowhere: its ranks run in their pods' own containers (kubernetes)
  none,     // nowhere: ranks start where no guard can clean up (mpirun, slurm)
};

// Why [container] cannot run with `backend` (named for the message), whose
// ranks run where `host` says; nullopt where guarded, or without [container].
std::optional<std::string> container_backend_problem(const JobSpec& job, ContainerHost host,
                                                     std::string_view backend);

// When a guarded container (container_argv) was given GPUs and its runtime
// exited `code` 125 or 126 with a last stderr line about them (podman:
// "unresolvable CDI devices nvidia.com/gpu=1"; docker: "could not select
// device driver ... with capabilities: [[gpu]]") before the program could run: a line naming the GPUs
// and [launch] bind_gpus, for the failure report. "" otherwise.
std::string container_gpu_failure(const std::vector<std::string>& argv, int code,
                                  const std::deque<std::string>& stderr_tail, int rank, const std::string& host);

// "podman run ... IMAGE" as --dry-run shows the container of `argv` (the
// guard left out): "" without [container].
std::string container_text(const JobSpec& job, const std::vector<std::string>& argv);

} // namespace ddl
