// SPDX-License-Identifier: MIT
// `ddl deepspeed`; see src/persona/deepspeed.hpp. The flag table is
// parse_args() of DeepSpeed 0.19.6's deepspeed/launcher/runner.py.
#include "src/persona/deepspeed.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl::persona {

namespace {

enum Flag {
  hostfile = 1, include, exclude, num_nodes, min_elastic_nodes, max_elastic_nodes, num_gpus, master_port,
  master_addr, node_rank, launcher, launcher_args, module, no_python, no_local_rank, no_ssh, no_ssh_check,
  force_multi, save_pid, enable_each_rank_log, autotuning, elastic_training, bind_cores_to_rank, bind_core_list,
  ssh_port, venv_script, log_level, quiet
};

// DeepSpeed's default hostfile, read when it exists and no other is named.
constexpr std::string_view k_default_hostfile = "/job/hostfile";

std::vector<Option> make_table() {
  std::vector<Option> rows = {
      {{"-H", "--hostfile"}, Arity::value, "FILE", "Hosts, `host slots=N` lines (default /job/hostfile if there)",
       hostfile},
      {{"-i", "--include"}, Arity::value, "NODE[:SLOTS]@...", "Only these hosts and slot ids", include},
      {{"-e", "--exclude"}, Arity::value, "NODE[:SLOTS]@...", "All but these hosts and slot ids", exclude},
      {{"--num_nodes"}, Arity::value, "N", "The first N hosts", num_nodes},
      {{"--min_elastic_nodes"}, Arity::value, "N", "Accepted without --elastic_training, which is refused",
       min_elastic_nodes},
      {{"--max_elastic_nodes"}, Arity::value, "N", "Accepted without --elastic_training, which is refused",
       max_elastic_nodes},
      {{"--num_gpus", "--num_accelerators"}, Arity::value, "N", "Ranks on every host, GPU ids 0..N-1", num_gpus},
      {{"--master_port"}, Arity::value, "PORT", "[torch] master_port (default: a free port)", master_port},
      {{"--master_addr"}, Arity::value, "ADDR", "Must be this machine or the first host", master_addr},
      {{"--node_rank"}, Arity::value, "0", "Only -1 or 0: ddl starts and numbers every node", node_rank},
      {{"--launcher"}, Arity::value, "pdsh|openmpi|slurm", "pdsh: ddl's own (ssh); openmpi: mpirun; slurm: srun",
       launcher},
      {{"--launcher_args"}, Arity::value, "ARGS", "openmpi: mpirun's options; slurm: srun's", launcher_args},
      {{"--module"}, Arity::flag, "", "Run the script as python -m MODULE", module},
      {{"--no_python"}, Arity::flag, "", "Run the script itself, not with python", no_python},
      {{"--no_local_rank"}, Arity::flag, "", "Do not pass --local_rank=N to the script", no_local_rank},
      {{"--no_ssh"}, Arity::flag, "", "Refused: ddl starts every node itself", no_ssh},
      {{"--no_ssh_check"}, Arity::flag, "", "Accepted; ddl checks its connections itself", no_ssh_check},
      {{"--force_multi"}, Arity::flag, "", "Accepted; ddl reaches a remote host over ssh anyway", force_multi},
      {{"--save_pid"}, Arity::flag, "", "Refused: ddl ps lists running jobs", save_pid},
      {{"--enable_each_rank_log"}, Arity::value, "DIR", "ddl's DIR/rank-R.attempt-A.log per rank",
       enable_each_rank_log},
      {{"--autotuning"}, Arity::value, "tune|run", "Refused: run DeepSpeed's autotuner with deepspeed", autotuning},
      {{"--elastic_training"}, Arity::flag, "", "Refused: ddl torchrun --nnodes MIN:MAX is ddl's elastic range",
       elastic_training},
      {{"--bind_cores_to_rank"}, Arity::flag, "", "Refused: ddl binds no cores", bind_cores_to_rank},
      {{"--bind_core_list"}, Arity::value, "LIST", "Refused: ddl binds no cores", bind_core_list},
      {{"--ssh_port"}, Arity::value, "PORT", "[ssh] port", ssh_port},
      {{"--venv_script"}, Arity::value, "FILE", "Refused: name the venv's interpreter with --python", venv_script},
      {{"--log_level"}, Arity::value, "LEVEL", "debug: ddl -vv; error, critical: ddl -q", log_level},
      {{"-q", "--quiet"}, Arity::flag, "", "ddl prints only errors", quiet},
  };
  rows = with_ddl_options(std::move(rows), {DdlOption::hosts, DdlOption::python, DdlOption::job, DdlOption::name,
                                           DdlOption::ssh_config, DdlOption::timeout, DdlOption::dry_run,
                                           DdlOption::verbose, DdlOption::stdin_ranks, DdlOption::preflight, DdlOption::no_preflight, DdlOption::help});
  auto own_hosts = std::ranges::find(rows, static_cast<int>(DdlOption::hosts), &Option::id);
  own_hosts->names = {"--hosts"};  // -H is DeepSpeed's hostfile
  own_hosts->help = "ddl's hosts instead of a hostfile, e.g. node[01-04]:8";
  return rows;
}

const std::vector<Option>& table() {
  static const std::vector<Option> rows = make_table();
  return rows;
}

struct State {
  Launch launch;
  std::optional<std::string> python;
  std::optional<Given> nodes;
  std::optional<int> gpus_each;
  std::string launcher = "pdsh";
  std::optional<Given> launcher_args;
  bool module = false;
  bool no_python = false;
  bool local_rank = true;
};

std::string lower(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

Result<void> read_refused(const Given& given) {
  switch (given.option->id) {
  case no_ssh:
    return option_error(given, "ddl starts every node from this one command; run it once, with every host in the "
                               "hostfile, without --no_ssh");
  case save_pid:
    return option_error(given, "ddl writes no pid file; `ddl ps` lists running jobs and `ddl stop NAME` ends one");
  case autotuning:
    return option_error(given, "DeepSpeed's autotuner runs its own experiments: run it with deepspeed itself");
  case elastic_training:
    return option_error(given, "DeepSpeed's elastic agent has no meaning under ddl; ddl's elastic restarts are "
                               "`ddl torchrun --nnodes MIN:MAX` or `ddl run --np MIN:MAX`");
  case bind_cores_to_rank:
  case bind_core_list: return option_error(given, "ddl does not bind ranks to cores; drop it");
  case venv_script:
    return option_error(given, "ddl runs no activation script; name the environment's interpreter instead: "
                               "--python ~/venv/bin/python (or [job] python)");
  case node_rank:
    if (given.value() == "-1" || given.value() == "0") {
      return {};
    }
    return option_error(given, "ddl starts every node from this one command and numbers them itself; run it "
                               "once, without --node_rank");
  default: return {};
  }
}

Result<void> read_level(const Given& given, Launch& launch) {
  const std::string level = given.value();
  if (level == "debug") {
    launch.verbose = 2;
  } else if (level == "error" || level == "critical") {
    launch.quiet = true;
  } else if (level != "info" && level != "warning") {
    return option_error(given, "not one of debug, info, warning, error, critical");
  }
  return {};
}

Result<void> read_value(const Given& given, State& state) {
  Launch& launch = state.launch;
  switch (given.option->id) {
  case hostfile: launch.overrides.hostfile = given.value(); return {};
  case include: launch.overrides.include = given.value(); return {};
  case exclude: launch.overrides.exclude = given.value(); return {};
  case num_nodes: state.nodes = given; return {};
  case num_gpus: {
    auto count = int_value(given, 1, 100'000);
    if (!count) {
      return fail(count.error());
    }
    state.gpus_each = *count;
    return {};
  }
  case master_port:
  case ssh_port: {
    auto port = int_value(given, given.option->id == ssh_port ? 1 : 0, 65535);
    if (!port) {
      return fail(port.error());
    }
    if (given.option->id == ssh_port) {
      launch.job_edits.push_back([p = *port](JobSpec& job) { job.ssh.port = p; });
    } else {
      launch.job_edits.push_back([p = *port](JobSpec& job) { job.torch.master_port = p; });
    }
    return {};
  }
  case master_addr:
    launch.plan_edits.push_back(rank0_host_is(given.value(), given.spelled + " " + given.value()));
    return {};
  case launcher: state.launcher = lower(given.value()); return {};
  case launcher_args: state.launcher_args = given; return {};
  case enable_each_rank_log:
    if (given.value() != "None") {
      launch.overrides.log_dir = given.value();
    }
    return {};
  case min_elastic_nodes:
  case max_elastic_nodes: {
    auto count = int_value(given, 1, 100'000);
    return count ? Result<void>{} : Result<void>{fail(count.error())};
  }
  case log_level: return read_level(given, launch);
  default: return read_refused(given);
  }
}

Result<void> read_option(const Given& given, State& state) {
  if (apply_ddl_option(given, state.launch, state.python)) {
    return {};
  }
  switch (given.option->id) {
  case module: state.module = true; return {};
  case no_python: state.no_python = true; return {};
  case no_local_rank: state.local_rank = false; return {};
  case quiet: state.launch.quiet = true; return {};
  case no_ssh_check:
  case force_multi: return {};
  default: return read_value(given, state);
  }
}

// --launcher and --launcher_args: ddl's backend, and the launcher's options.
Result<void> read_launcher(State& state) {
  std::vector<std::string> args;
  if (state.launcher_args) {
    auto words = shell_words(*state.launcher_args);
    if (!words) {
      return fail(words.error());
    }
    args = std::move(*words);
  }
  Launch& launch = state.launch;
  if (state.launcher == "openmpi") {
    launch.job_edits.push_back([args](JobSpec& job) {
      job.launch.backend = BackendKind::mpirun;
      job.mpirun.args.insert(job.mpirun.args.end(), args.begin(), args.end());
    });
  } else if (state.launcher == "slurm") {
    launch.job_edits.push_back([args](JobSpec& job) {
      job.launch.backend = BackendKind::slurm;
      job.slurm.srun_args.insert(job.slurm.srun_args.end(), args.begin(), args.end());
    });
  } else if (state.launcher != "pdsh") {
    return fail(ExitCode::usage, fmt::format("--launcher {}: ddl starts ranks over ssh (pdsh), Open MPI's mpirun "
                                             "(openmpi) or srun (slurm); MPICH, Intel MPI and MVAPICH launchers "
                                             "are not among them",
                                             state.launcher));
  } else if (!args.empty()) {
    return option_error(*state.launcher_args, "pdsh's options have no meaning: ddl reaches the hosts over ssh "
                                              "itself ([ssh] in a --job file sets user, port and identity)");
  }
  return {};
}

// The hosts: the hostfile (DeepSpeed's default one when it is there), the
// first --num_nodes of them, --num_gpus on each.
Result<void> read_hosts(State& state, const Machine& machine) {
  Launch& launch = state.launch;
  Overrides& o = launch.overrides;
  if ((state.nodes || state.gpus_each) && (o.include || o.exclude)) {
    return fail(ExitCode::usage, "Cannot specify num_nodes/gpus with include/exclude");
  }
  if (!o.hostfile && o.hosts.empty() && machine.is_file(std::string(k_default_hostfile))) {
    o.hostfile = std::string(k_default_hostfile);
  }
  if (state.nodes) {
    auto count = int_value(*state.nodes, 1, 100'000);
    if (!count) {
      return fail(count.error());
    }
    launch.job_edits.push_back([n = *count](JobSpec& job) { job.hosts.max_hosts = n; });
    launch.plan_edits.push_back(at_least_hosts(*count, state.nodes->spelled + " " + state.nodes->value()));
  }
  if (state.gpus_each) {
    launch.job_edits.push_back([n = *state.gpus_each](JobSpec& job) { job.hosts.slots_each = n; });
  }
  // One node and no resource option: CUDA_VISIBLE_DEVICES is its --include.
  const char* visible = machine.getenv("CUDA_VISIBLE_DEVICES");
  if (!o.hostfile && o.hosts.empty() && !state.nodes && !state.gpus_each && !o.include && !o.exclude &&
      visible != nullptr && *visible != 0) {
    launch.job_edits.push_back([include = "localhost:" + std::string(visible)](JobSpec& job) {
      const HostsSection& h = job.hosts;
      if (h.list.empty() && h.hostfile.empty() && h.discovery_script.empty() && h.slurm != SlurmHosts::on) {
        job.hosts.include = include;
      }
    });
  }
  // One machine and no host source: its GPUs, as DeepSpeed's launcher counts them.
  launch.plan_edits.push_back([gpus_each = state.gpus_each, gpus = machine.gpus](JobSpec&,
                                                                                const PlanView& view) -> Result<void> {
    const bool local_only = view.plan.hosts.size() == 1 && view.plan.hosts.front().source == "local";
    if (!local_only || gpus_each || gpus() > 0) {
      return {};
    }
    return fail(ExitCode::usage, "no hostfile and no GPU on this machine (DeepSpeed's launcher stops here too): "
                                 "write a hostfile (`localhost slots=2`) or --num_gpus N");
  });
  return {};
}

// What DeepSpeed's launcher exports to every node: these prefixes of its own
// environment (EXPORT_ENVS, NEBULA_EXPORT_ENVS and the CUDA accelerator's),
// then .deepspeed_env from the home and working directories (DS_ENV_FILE
// names another file).
Result<void> read_environment(State& state, const Machine& machine) {
  static const std::vector<std::string> prefixes = {
      "MLFLOW*", "PYTHON*", "MV2*", "UCX*", "NCCL*", "DLTS_JOB_ID*", "DLTS_NUM_WORKER*", "NEBULA_*", "AML_RUN_ID*",
      "AZUREML_*", "FC_TASKROLE_NAME*", "FC_TASK_INDEX*", "MASTER_HOST*", "LOCAL_HOST*"};
  state.launch.job_edits.push_back([](JobSpec& job) {
    job.env_pass.insert(job.env_pass.end(), prefixes.begin(), prefixes.end());
  });
  const char* named = machine.getenv("DS_ENV_FILE");
  const std::string name = named != nullptr ? named : ".deepspeed_env";
  std::vector<std::string> paths;
  for (const std::string& dir : {machine.home, machine.cwd}) {
    std::string path = name.starts_with('/') ? name : dir + "/" + name;
    if (!dir.empty() && machine.is_file(path) && std::ranges::find(paths, path) == paths.end()) {
      paths.push_back(path);
    }
  }
  for (const std::string& path : paths) {
    auto env = machine.env_file(path);
    if (!env) {
      return fail(env.error());
    }
    for (const auto& [key, value] : *env) {
      state.launch.overrides.env.push_back(key + "=" + value);
    }
  }
  // Its multi-node runners put the working directory first on PYTHONPATH.
  const char* launcher_path = machine.getenv("PYTHONPATH");
  state.launch.plan_edits.push_back([cwd = machine.cwd, path = std::string(launcher_path ? launcher_path : "")](
                                        JobSpec& job, const PlanView& view) -> Result<void> {
    if (view.ranks_here || std::ranges::any_of(job.env, [](const auto& kv) { return kv.first == "PYTHONPATH"; })) {
      return {};
    }
    job.env.emplace_back("PYTHONPATH", path.empty() ? cwd : cwd + ":" + path);
    return {};
  });
  return {};
}

Result<void> program(State& state, std::vector<std::string> words, const Machine& machine) {
  if (words.empty()) {
    return fail(ExitCode::usage, "no user script: ddl deepspeed [options] SCRIPT [args]");
  }
  if (state.no_python && state.module) {
    return fail(ExitCode::usage, "Don't use both the '--no_python' flag and the '--module' flag at the same time.");
  }
  const Interpreter interpreter = state.no_python ? Interpreter::none
                                  : state.module  ? Interpreter::python_module
                                                  : Interpreter::python_script;
  // launch.py's per-rank variables, from ddl's torch ones.
  PerRank per_rank{state.local_rank ? "--local_rank" : "",
                   "export CROSS_RANK=\"$GROUP_RANK\" CROSS_SIZE=\"$GROUP_WORLD_SIZE\" "
                   "LOCAL_SIZE=\"$LOCAL_WORLD_SIZE\""};
  // Its runner and launch.py run the script with sys.executable on every node.
  state.launch.job_edits.push_back(program_edit(std::move(words), interpreter, state.python, per_rank,
                                                [machine](const std::string& name) {
                                                  return python_on_path(name, machine);
                                                }));
  return {};
}

} // namespace

std::span<const Option> deepspeed_options() { return table(); }

std::vector<HabitSpelling> deepspeed_run_habits() {
  return habit_spellings(table(), {{num_gpus, RunHabit::ranks_per_host}, {num_nodes, RunHabit::node_count}});
}

Result<Launch> read_deepspeed(const std::vector<std::string>& args, const Machine& machine) {
  State state;
  auto words = read_words(table(), args, "deepspeed", Dashes::double_only,
                          [&state](const Given& given) { return read_option(given, state); });
  if (!words) {
    return fail(words.error());
  }
  if (state.launch.help) {
    return std::move(state.launch);
  }
  Launch& launch = state.launch;
  launch.job_edits.push_back(ensure_framework(Framework::torch));
  // Every rank sees its host's slot ids and picks cuda:LOCAL_RANK.
  launch.job_edits.push_back([](JobSpec& job) {
    job.launch.bind_gpus = false;
    job.launch.host_gpus = true;
  });
  if (auto done = read_launcher(state); !done) {
    return fail(done.error());
  }
  if (auto done = read_hosts(state, machine); !done) {
    return fail(done.error());
  }
  if (auto done = read_environment(state, machine); !done) {
    return fail(done.error());
  }
  if (auto done = program(state, std::move(*words), machine); !done) {
    return fail(done.error());
  }
  launch.plan_edits.push_back(whole_env_here());
  return std::move(state.launch);
}

std::string deepspeed_help() {
  return help_text({"deepspeed", "[options] SCRIPT [args]",
                    "ddl deepspeed: a DeepSpeed launcher command line, run by ddl on every host at once",
                    "DeepSpeed launcher's options (DeepSpeed 0.19.6)",
                    "  ddl deepspeed --hostfile=myhostfile train.py --deepspeed --deepspeed_config ds_config.json\n"
                    "  ddl deepspeed --num_gpus=2 train.py\n"
                    "  ddl deepspeed --include=\"worker-2:0,1\" --master_port=29501 train.py\n"},
                   table());
}

} // namespace ddl::persona
