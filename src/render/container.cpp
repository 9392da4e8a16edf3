// SPDX-License-Identifier: MIT
#include "src/render/container.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>

#include "src/util/env.hpp"
#include "src/util/text.hpp"
#include "src/util/topology.hpp"

namespace ddl {

namespace {

// Runs $1 (the setup line) with eval in the shell that then executes the
// program, so that what it sets stays; bash when there is one ("source"
// and conda's hooks need it). The EXIT trap also speaks for a setup line
// that ends the shell itself (exit, set -e). No single quote: it sits
// inside one below.
constexpr std::string_view k_setup_body =
    "__ddl_setup=$1; __ddl_ok=\n"
    "__ddl_fail() { [ -n \"$__ddl_ok\" ] || printf \"ddl: [job] setup failed (exit %s): %s\\n\" \"$1\" "
    "\"$__ddl_setup\" >&2; }\n"
    "trap \"__ddl_fail \\$?\" EXIT\n"
    "eval \"$__ddl_setup\" || exit\n"
    "__ddl_ok=1; trap - EXIT; shift; exec \"$@\"";

// The container guard: $1 the runtime, $2 the container's name, the rest
// the runtime's words. A watcher started through setsid, in a session of
// its own so that killing the rank's process group spares it, holds the
// read end of a FIFO whose write end only this shell holds. When the shell
// ends, whether the runtime client returned or the group was killed (the
// grace ran out, ddl was killed, the lifeline fired), the watcher reads EOF
// and removes the container if it still exists: a killed client leaves it
// running, and so does a client that a signal ends between the container's
// start and the client's signal proxy (podman's window). The shell
// outlives the signals that stop the rank (they reach the client too, which
// passes them to the container), so that the container ends as it would
// without ddl. The runtime starts only once the watcher said it is in its
// own session.
constexpr std::string_view k_guard_script = R"GUARD(__ddl_rt=$1 __ddl_n=$2
shift 2
if ! command -v "$__ddl_rt" >/dev/null 2>&1; then
  echo "ddl: the container runtime $__ddl_rt is not installed on $(uname -n)" >&2; exit 127
fi
__ddl_ss=$(command -v setsid 2>/dev/null) || {
  echo "ddl: setsid (util-linux) is not installed on $(uname -n); ddl needs it to remove containers" >&2; exit 127; }
__ddl_d=$(mktemp -d 2>/dev/null) && mkfifo "$__ddl_d/p" || {
  echo "ddl: cannot make a FIFO in ${TMPDIR:-/tmp} on $(uname -n)" >&2; exit 126; }
exec 9<>"$__ddl_d/p"
__ddl_ok=$( ("$__ddl_ss" sh -c 'exec 8<"$1" </dev/null 2>/dev/null; echo ready; exec >/dev/null
  read -r __ddl_w <&8; "$2" container inspect "$3" >/dev/null 2>&1 || exit 0; "$2" kill "$3"; "$2" rm -f "$3"' \
  ddl-container-guard "$__ddl_d/p" "$__ddl_rt" "$__ddl_n" 9>&- &) )
rm -rf "$__ddl_d"
[ "$__ddl_ok" = ready ] || { echo "ddl: the container guard did not start on $(uname -n)" >&2; exit 126; }
trap : HUP INT QUIT TERM USR1 USR2
"$__ddl_rt" "$@" 9>&-
exit "$?"
)GUARD";

std::string runtime_program(const JobSpec& job) { return std::string(to_string(job.container.runtime)); }

// The rank's GPUs as CUDA_VISIBLE_DEVICES names them (indices or UUIDs).
std::vector<std::string> visible_gpus(const EnvList& env) {
  std::vector<std::string> gpus;
  for (const std::string& id : split(env_value(env, "CUDA_VISIBLE_DEVICES"), ',')) {
    if (!trim(id).empty()) {
      gpus.emplace_back(trim(id));
    }
  }
  return gpus;
}

// Inside a podman or docker container the rank's GPUs are 0..n-1.
void renumber_gpus(EnvList& env, std::size_t count) {
  std::string ids;
  for (std::size_t i = 0; i < count; ++i) {
    ids += (i == 0 ? "" : ",") + std::to_string(i);
  }
  for (auto& [name, value] : env) {
    if (name == "CUDA_VISIBLE_DEVICES") {
      value = ids;
    }
  }
}

void add_gpus(const JobSpec& job, std::vector<std::string>& words, EnvList& env) {
  const std::vector<std::string> gpus = visible_gpus(env);
  if (gpus.empty()) {
    return;
  }
  if (job.container.runtime == ContainerRuntime::podman) {
    for (const std::string& gpu : gpus) {
      words.insert(words.end(), {"--device", "nvidia.com/gpu=" + gpu});
    }
  } else {
    std::string list;
    for (const std::string& gpu : gpus) {
      list += (list.empty() ? "" : ",") + gpu;
    }
    words.insert(words.end(), {"--gpus", "\"device=" + list + "\""});
  }
  renumber_gpus(env, gpus.size());
}

std::vector<std::string> run_words(const JobSpec& job, const ContainerRank& who, const std::vector<std::string>& argv,
                                   EnvList& env, const std::vector<std::string>& names) {
  const ContainerSection& c = job.container;
  std::vector<std::string> words{"run", "--rm", "--name", container_name(who), "--network", "host",
                                 "--ipc", "host", "--pid", "host"};
  add_gpus(job, words, env);
  if (c.runtime == ContainerRuntime::docker && !who.cpus.empty()) {
    words.insert(words.end(), {"--cpuset-cpus", cpu_list_text(who.cpus)});  // dockerd starts it: no inherited affinity
  }
  if (!c.workdir.empty()) {
    words.insert(words.end(), {"--workdir", c.workdir});
  }
  for (const std::string& mount : c.mounts) {
    words.insert(words.end(), {"--volume", mount});
  }
  for (const std::string& name : names) {
    words.insert(words.end(), {"--env", name});
  }
  words.insert(words.end(), c.options.begin(), c.options.end());
  words.push_back(c.image);
  words.insert(words.end(), argv.begin(), argv.end());
  return words;
}

std::vector<std::string> apptainer_words(const JobSpec& job, const std::vector<std::string>& argv, const EnvList& env) {
  const ContainerSection& c = job.container;
  std::vector<std::string> words{"apptainer", "exec"};
  if (!visible_gpus(env).empty()) {
    words.emplace_back("--nv");
  }
  for (const std::string& mount : c.mounts) {
    words.insert(words.end(), {"--bind", mount});
  }
  if (!c.workdir.empty()) {
    words.insert(words.end(), {"--pwd", c.workdir});
  }
  words.insert(words.end(), c.options.begin(), c.options.end());
  words.push_back(c.image);
  words.insert(words.end(), argv.begin(), argv.end());
  return words;
}

std::vector<std::string> template_words(const JobSpec& job, const ContainerRank& who,
                                        const std::vector<std::string>& argv, const EnvList& env) {
  std::string gpus;
  for (const std::string& gpu : visible_gpus(env)) {
    gpus += (gpus.empty() ? "" : ",") + gpu;
  }
  std::vector<std::string> words;
  bool spliced = false;
  for (const std::string& word : job.container.custom) {
    if (word == "{command}") {
      words.insert(words.end(), argv.begin(), argv.end());
      spliced = true;
      continue;
    }
    std::string filled = replace_all(word, "{image}", job.container.image);
    filled = replace_all(filled, "{name}", container_name(who));
    filled = replace_all(filled, "{workdir}", job.container.workdir);
    words.push_back(replace_all(filled, "{gpus}", gpus));
  }
  if (!spliced) {
    words.insert(words.end(), argv.begin(), argv.end());
  }
  return words;
}

// Job names may hold anything; container names are [a-zA-Z0-9][a-zA-Z0-9_.-]*.
std::string name_part(std::string_view job) {
  std::string out;
  for (char c : job.substr(0, 40)) {
    const bool fine = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == '-';
    out += fine ? c : '-';
  }
  return out.empty() ? "job" : out;
}

} // namespace

std::vector<std::string> setup_argv(const std::string& setup, const std::vector<std::string>& argv) {
  if (setup.empty()) {
    return argv;
  }
  std::vector<std::string> wrapped{
      "/bin/sh", "-c",
      fmt::format("__ddl_sh=$(command -v bash 2>/dev/null) || __ddl_sh=/bin/sh; exec \"$__ddl_sh\" -c '{}' ddl-setup \"$@\"",
                  k_setup_body),
      "ddl-setup", setup};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

std::string container_name(const ContainerRank& who) {
  return fmt::format("ddl-{}-{}-a{}-{}", name_part(who.job), who.rank, who.attempt, who.tag);
}

std::vector<std::string> container_argv(const JobSpec& job, const ContainerRank& who,
                                        const std::vector<std::string>& argv, EnvList& env,
                                        const std::vector<std::string>& names) {
  switch (job.container.runtime) {
  case ContainerRuntime::apptainer: return apptainer_words(job, argv, env);
  case ContainerRuntime::custom: return template_words(job, who, argv, env);
  case ContainerRuntime::podman:
  case ContainerRuntime::docker: break;
  }
  std::vector<std::string> guarded{"/bin/sh", "-c", std::string(k_guard_script), "ddl-container",
                                   runtime_program(job), container_name(who)};
  std::vector<std::string> run = run_words(job, who, argv, env, names);
  guarded.insert(guarded.end(), run.begin(), run.end());
  return guarded;
}

bool is_runtime_client_variable(std::string_view name) {
  constexpr std::array<std::string_view, 4> prefixes = {"CONTAINERS_", "DOCKER_", "APPTAINER_", "SINGULARITY_"};
  return name == "XDG_RUNTIME_DIR" ||
         std::ranges::any_of(prefixes, [&](std::string_view prefix) { return name.starts_with(prefix); });
}

EnvList runtime_client_env(char** environ_ptr) {
  EnvList env;
  for (char** entry = environ_ptr; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view item(*entry);
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos && is_runtime_client_variable(item.substr(0, eq))) {
      env.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
  }
  return env;
}

std::optional<std::string> container_backend_problem(const JobSpec& job, ContainerHost host,
                                                     std::string_view backend) {
  if (!job.container.enabled() || host == ContainerHost::guarded) {
    return std::nullopt;
  }
  if (host == ContainerHost::pods) {
    return "[container]: the kubernetes backend runs ranks in its pods' own containers; leave [container] out "
           "and set the image in the pods";
  }
  return fmt::format("[container]: works with the local and ssh backends, not {} (ddl could not remove a "
                     "container that outlives its rank there)",
                     backend);
}

std::string container_gpu_failure(const std::vector<std::string>& argv, int code,
                                  const std::deque<std::string>& stderr_tail, int rank, const std::string& host) {
  auto about_gpus = [](const std::string& line) {
    return line.find("CDI devices") != std::string::npos || line.find("[[gpu]]") != std::string::npos;
  };
  // The guard's words, then `RUNTIME run ... --pid host`, then add_gpus' pairs.
  if ((code != 125 && code != 126) || argv.size() < 8 || argv[3] != "ddl-container" ||
      std::ranges::none_of(stderr_tail, about_gpus)) {
    return {};
  }
  auto word = std::find(argv.begin() + 6, argv.end(), "--pid");
  std::string gpus;
  if (argv.end() - word < 2) {
    return {};
  }
  for (word += 2; argv.end() - word >= 2 && (*word == "--device" || *word == "--gpus"); word += 2) {
    gpus += (gpus.empty() ? "" : " ") + *(word + 1);
  }
  if (gpus.empty()) {
    return {};
  }
  return fmt::format("ddl: rank {}'s container was given GPUs ({}) and {} exited {} before the program ran: "
                     "[launch] bind_gpus gives each rank the GPUs of its slots; if {} has no such GPU (or no "
                     "CDI spec for it), set [launch] bind_gpus = false\n",
                     rank, gpus, argv[4], code, host);
}

std::string container_text(const JobSpec& job, const std::vector<std::string>& argv) {
  if (!job.container.enabled()) {
    return {};
  }
  // The guard's words: sh -c SCRIPT ddl-container RUNTIME NAME, then the runtime's.
  std::vector<std::string> shown = argv;
  if (argv.size() > 6 && argv[3] == "ddl-container") {
    shown.assign(argv.begin() + 6, argv.end());
    shown.insert(shown.begin(), argv[4]);
  }
  std::string out;
  for (const std::string& word : shown) {
    out += (out.empty() ? "" : " ") + shell_word(word);
  }
  return out;
}

} // namespace ddl
