// SPDX-License-Identifier: MIT
// `ddl torchrun`; see src/persona/torchrun.hpp. The flag table is torchrun's
// get_args_parser() in PyTorch 2.9 (torch/distributed/run.py).
#include "src/persona/torchrun.hpp"

#include <set>

#include <fmt/core.h>

#include "src/util/rank_list.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/text.hpp"

namespace ddl::persona {

namespace {

enum Flag {
  nnodes = 1, nproc_per_node, rdzv_backend, rdzv_endpoint, rdzv_id, rdzv_conf, standalone, max_restarts,
  monitor_interval, start_method, event_log_handler, role, module, no_python, run_path, log_dir, redirects, tee,
  local_ranks_filter, node_rank, master_addr, master_port, local_addr, logs_specs, numa_binding, signals_to_handle
};

std::vector<Option> make_table() {
  std::vector<Option> rows = {
      {{"--nnodes"}, Arity::value, "N|MIN:MAX", "Hosts: the first N of ddl's; MIN:MAX: ddl's elastic range", nnodes},
      {{"--nproc-per-node", "--nproc_per_node"}, Arity::value, "N|gpu|cpu|auto", "Ranks on every host", nproc_per_node},
      {{"--rdzv-backend", "--rdzv_backend"}, Arity::value, "NAME", "Accepted; ddl runs its own rendezvous",
       rdzv_backend},
      {{"--rdzv-endpoint", "--rdzv_endpoint"}, Arity::value, "HOST[:PORT]",
       "Must be this machine or the first host (static: PORT is MASTER_PORT)", rdzv_endpoint},
      {{"--rdzv-id", "--rdzv_id"}, Arity::value, "ID", "The job's name (TORCHELASTIC_RUN_ID)", rdzv_id},
      {{"--rdzv-conf", "--rdzv_conf"}, Arity::value, "K=V,...", "join_timeout=S: [rendezvous] timeout", rdzv_conf},
      {{"--standalone"}, Arity::flag, "", "One node", standalone},
      {{"--max-restarts", "--max_restarts"}, Arity::value, "N", "Restart the whole gang up to N times", max_restarts},
      {{"--monitor-interval", "--monitor_interval"}, Arity::value, "S", "Accepted; ddl watches ranks continuously",
       monitor_interval},
      {{"--start-method", "--start_method"}, Arity::value, "spawn|fork|forkserver",
       "Accepted; every rank is a process of its own", start_method},
      {{"--event-log-handler", "--event_log_handler"}, Arity::value, "NAME", "Accepted; ddl --json has the events",
       event_log_handler},
      {{"--role"}, Arity::value, "ROLE", "ROLE_NAME of every rank", role},
      {{"-m", "--module"}, Arity::flag, "", "Run the script as python -m MODULE", module},
      {{"--no-python", "--no_python"}, Arity::flag, "", "Run the script itself, not with python", no_python},
      {{"--run-path", "--run_path"}, Arity::flag, "", "Run the script with python (takes precedence over --no-python)",
       run_path},
      {{"--log-dir", "--log_dir"}, Arity::value, "DIR", "ddl's DIR/rank-R.attempt-A.log per rank", log_dir},
      {{"-r", "--redirects"}, Arity::value, "0", "Only 0: ddl always shows rank output", redirects},
      {{"-t", "--tee"}, Arity::value, "N", "With --log-dir: every stream of every rank goes to its log", tee},
      {{"--local-ranks-filter", "--local_ranks_filter"}, Arity::value, "0,1,..", "Show only these local ranks",
       local_ranks_filter},
      {{"--node-rank", "--node_rank"}, Arity::value, "0", "Only 0: ddl starts and numbers every node", node_rank},
      {{"--master-addr", "--master_addr"}, Arity::value, "HOST", "Must be this machine or the first host", master_addr},
      {{"--master-port", "--master_port"}, Arity::value, "PORT", "[torch] master_port (0: a free one)", master_port},
      {{"--local-addr", "--local_addr"}, Arity::value, "ADDR", "Accepted; ddl finds each host's address", local_addr},
      {{"--logs-specs", "--logs_specs"}, Arity::value, "NAME", "Refused: ddl writes the logs itself", logs_specs},
      {{"--numa-binding", "--numa_binding"}, Arity::value, "node",
       "Only node: each rank bound to the NUMA node of its GPU (--bind gpu)", numa_binding},
      {{"--signals-to-handle", "--signals_to_handle"}, Arity::value, "SIG,...",
       "Accepted; ddl forwards SIGINT and SIGTERM (and USR1, USR2, CONT, TSTP)", signals_to_handle},
  };
  return with_ddl_options(std::move(rows), {DdlOption::hosts, DdlOption::hostfile, DdlOption::backend,
                                           DdlOption::python, DdlOption::job, DdlOption::name,
                                           DdlOption::ssh_config, DdlOption::timeout, DdlOption::dry_run,
                                           DdlOption::verbose, DdlOption::quiet, DdlOption::stdin_ranks, DdlOption::preflight, DdlOption::no_preflight, DdlOption::help});
}

const std::vector<Option>& table() {
  static const std::vector<Option> rows = make_table();
  return rows;
}

// What the options said, turned into the Launch at the end.
struct State {
  Launch launch;
  std::optional<std::string> python;
  std::optional<std::pair<int, int>> nodes;  // --nnodes MIN, MAX
  std::string nodes_shown;
  std::optional<Given> nproc;
  std::string rdzv_backend = "static";
  std::optional<Given> endpoint;
  std::optional<Given> master_addr;
  bool standalone = false;
  bool module = false;
  bool no_python = false;
  bool run_path = false;
  std::optional<Given> tee;
  std::set<int> local_ranks;
  std::optional<std::string> run_id;
};

// torchrun reads PET_<DEST> for each option it does not see (argparse_util's env actions).
std::vector<Given> from_environment(const Machine& machine) {
  std::vector<Given> found;
  for (const Option& option : table()) {
    if (option.id >= static_cast<int>(DdlOption::job) || option.id == logs_specs) {
      continue;
    }
    std::string dest(option.names.back().substr(2));
    for (char& c : dest) {
      c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    const std::string name = "PET_" + dest;
    const char* value = machine.getenv(name.c_str());
    if (value == nullptr) {
      continue;
    }
    Given given{&option, name, {}};
    if (option.arity == Arity::value) {
      given.values.emplace_back(value);
    } else if (std::string_view(value) != "1") {
      continue;  // a flag: "1" sets it, as torchrun's check_env reads it
    }
    found.push_back(std::move(given));
  }
  return found;
}

Result<void> read_nnodes(const Given& given, State& state) {
  const std::string& text = given.value();
  const std::size_t colon = text.find(':');
  auto low = parse_int(text.substr(0, colon));
  auto high = colon == std::string::npos ? low : parse_int(text.substr(colon + 1));
  if (!low || !high || *low < 1 || *high < *low || *high > 100'000) {
    return option_error(given, "not N or MIN:MAX (1 <= MIN <= MAX)");
  }
  state.nodes = std::pair(static_cast<int>(*low), static_cast<int>(*high));
  state.nodes_shown = given.spelled + " " + text;
  return {};
}

Result<void> read_rdzv_conf(const Given& given, State& state) {
  for (const std::string& item : split(given.value(), ',')) {
    if (item.empty()) {
      continue;
    }
    const std::size_t equals = item.find('=');
    if (equals == std::string::npos) {
      return option_error(given, fmt::format("'{}' is not KEY=VALUE", item));
    }
    if (item.substr(0, equals) == "join_timeout") {
      auto seconds = parse_int(item.substr(equals + 1));
      if (!seconds || *seconds < 1) {
        return option_error(given, "join_timeout must be a whole number of seconds");
      }
      state.launch.job_edits.push_back([s = *seconds](JobSpec& job) { job.rendezvous.timeout = Millis{s * 1000}; });
    }
  }
  return {};
}

Result<void> read_local_ranks(const Given& given, State& state) {
  for (const std::string& item : split(given.value(), ',')) {
    auto rank = parse_int(trim(item));
    if (!rank) {
      return option_error(given, "must be a comma-separated list of integers e.g. --local_ranks_filter=0,1,2");
    }
    state.local_ranks.insert(static_cast<int>(*rank));
  }
  return {};
}

// torchrun's node binds a rank to the NUMA node of its GPU, as ddl's
// --bind gpu does; ddl has nothing for its socket, exclusive and
// core-complex modes.
Result<void> read_numa_binding(const Given& given, Launch& launch) {
  if (given.value() != "node") {
    return option_error(given, "ddl binds a rank to its GPU's NUMA node (node, ddl's --bind gpu), or to cores or "
                               "NUMA nodes dealt among the host's ranks (ddl run --bind core|numa); it has no "
                               "socket, exclusive or core-complex binding");
  }
  launch.overrides.bind = "gpu";
  return {};
}

Result<void> read_signals(const Given& given) {
  for (const std::string& item : split(given.value(), ',')) {
    if (!parse_catchable_signal(trim(item))) {
      return option_error(given, fmt::format("'{}' is not a signal name", item));
    }
  }
  return {};
}

// Options that only name what ddl does anyway: checked, nothing to do.
Result<void> read_accepted(const Given& given) {
  switch (given.option->id) {
  case monitor_interval:
    if (given.value().empty() || given.value().find_first_not_of("0123456789.") != std::string::npos) {
      return option_error(given, "not a number of seconds");
    }
    return {};
  case start_method:
    if (given.value() != "spawn" && given.value() != "fork" && given.value() != "forkserver") {
      return option_error(given, "not one of spawn, fork, forkserver");
    }
    return {};
  case signals_to_handle: return read_signals(given);
  default: return {};
  }
}

Result<void> read_refused(const Given& given) {
  switch (given.option->id) {
  case logs_specs:
    return option_error(given, "a torchrun logging plugin has no meaning under ddl, which writes the rank logs "
                               "itself: use --log-dir DIR");
  case redirects:
    if (given.value() == "0") {
      return {};
    }
    return option_error(given, "ddl always shows rank output on its own stdout and stderr; to keep it in files "
                               "too, use -t 3 --log-dir DIR, and --local-ranks-filter to show fewer ranks");
  case node_rank:
    if (given.value() == "0") {
      return {};
    }
    return option_error(given, "ddl starts every node from this one command and numbers them itself (node ranks "
                               "0.. in host order); run it once, with every host in -H or --hostfile, without "
                               "--node-rank");
  default: return {};
  }
}

Result<void> read_value(const Given& given, State& state) {
  Launch& launch = state.launch;
  switch (given.option->id) {
  case nnodes: return read_nnodes(given, state);
  case nproc_per_node: state.nproc = given; return {};
  case rdzv_backend: state.rdzv_backend = given.value(); return {};
  case rdzv_endpoint: state.endpoint = given; return {};
  case rdzv_id: state.run_id = given.value(); return {};
  case rdzv_conf: return read_rdzv_conf(given, state);
  case max_restarts: {
    auto count = int_value(given, 0, INT32_MAX);
    if (!count) {
      return fail(count.error());
    }
    launch.overrides.max_restarts = *count;
    return {};
  }
  case role: launch.overrides.env.push_back("ROLE_NAME=" + given.value()); return {};
  case log_dir: launch.overrides.log_dir = given.value(); return {};
  case numa_binding: return read_numa_binding(given, launch);
  case tee: state.tee = given; return {};
  case local_ranks_filter: return read_local_ranks(given, state);
  case master_addr: state.master_addr = given; return {};
  case master_port: {
    auto port = int_value(given, 0, 65535);
    if (!port) {
      return fail(port.error());
    }
    launch.job_edits.push_back([p = *port](JobSpec& job) { job.torch.master_port = p; });
    return {};
  }
  default: break;
  }
  if (auto accepted = read_accepted(given); !accepted) {
    return accepted;
  }
  return read_refused(given);
}

Result<void> read_option(const Given& given, State& state) {
  if (apply_ddl_option(given, state.launch, state.python)) {
    return {};
  }
  switch (given.option->id) {
  case standalone: state.standalone = true; return {};
  case module: state.module = true; return {};
  case no_python: state.no_python = true; return {};
  case run_path: state.run_path = true; return {};
  default: return read_value(given, state);
  }
}

// --nproc-per-node: every host's ranks (N, this machine's CPUs, or each
// host's GPUs); its default is torchrun's 1 for hosts whose count is not given.
Result<void> per_node(State& state, const Machine& machine, std::optional<int>& count) {
  std::string spec = state.nproc ? state.nproc->value() : "";
  if (spec == "auto") {
    spec = machine.gpus() > 0 ? "gpu" : "cpu";
  }
  if (spec.empty()) {
    state.launch.job_edits.push_back([](JobSpec& job) {
      if (!job.hosts.slots && !job.hosts.slots_from_gpus) {
        job.hosts.slots = 1;
      }
    });
    return {};
  }
  if (spec == "gpu") {
    state.launch.job_edits.push_back([](JobSpec& job) { job.hosts.slots_from_gpus = true; });
    return {};
  }
  if (spec == "cpu") {
    count = machine.cpus;
    state.launch.plan_edits.push_back([](JobSpec&, const PlanView& view) -> Result<void> {
      if (view.ranks_here) {
        return {};
      }
      return fail(ExitCode::usage, "--nproc-per-node cpu counts this machine's CPUs, and ddl does not count "
                                   "them on other hosts: write the number of ranks per host");
    });
  } else {
    auto number = int_value(*state.nproc, 1, 100'000);
    if (!number) {
      return option_error(*state.nproc, "not a number, gpu, cpu or auto (ddl does not count xpu devices)");
    }
    count = *number;
  }
  state.launch.job_edits.push_back([n = *count](JobSpec& job) {
    job.hosts.slots_each = n;
    job.hosts.slots_from_gpus = false;
  });
  return {};
}

// --nnodes: the first MAX hosts, at least MIN; MIN < MAX is ddl's elastic
// range (min_np = MIN x ranks per node).
Result<void> node_count(State& state, std::optional<int> per_host) {
  if (!state.nodes) {
    return {};
  }
  const int least = state.nodes->first;
  const int most = state.nodes->second;
  state.launch.job_edits.push_back([most](JobSpec& job) { job.hosts.max_hosts = most; });
  state.launch.plan_edits.push_back(at_least_hosts(least, state.nodes_shown));
  if (least == most) {
    return {};
  }
  if (!per_host) {
    return fail(ExitCode::usage, fmt::format("{}: an elastic range needs a number of ranks per node: write "
                                             "--nproc-per-node N",
                                             state.nodes_shown));
  }
  state.launch.job_edits.push_back([least, most, n = *per_host](JobSpec& job) {
    job.launch.np.min = least * n;
    job.launch.np.max = most * n;
  });
  return {};
}

// The rendezvous and master options: where rank 0 is, and its port.
Result<void> rendezvous_place(State& state) {
  if (state.standalone) {
    state.launch.plan_edits.push_back([](JobSpec&, const PlanView& view) -> Result<void> {
      if (view.plan.hosts.size() <= 1) {
        return {};
      }
      return fail(ExitCode::usage, fmt::format("--standalone runs one node, but the job has {} hosts: drop "
                                               "--standalone to run on all of them",
                                               view.plan.hosts.size()));
    });
    return {};  // torchrun ignores the endpoint then
  }
  if (state.endpoint) {
    auto [host, port] = host_and_port(state.endpoint->value());
    state.launch.plan_edits.push_back(rank0_host_is(host, state.endpoint->spelled + " " + state.endpoint->value()));
    if (state.rdzv_backend == "static" && !port.empty()) {
      auto number = parse_int(port);
      if (!number || *number > 65535) {
        return option_error(*state.endpoint, "bad port");
      }
      state.launch.job_edits.push_back([p = static_cast<int>(*number)](JobSpec& job) { job.torch.master_port = p; });
    }
  }
  if (state.master_addr) {
    state.launch.plan_edits.push_back(
        rank0_host_is(state.master_addr->value(), state.master_addr->spelled + " " + state.master_addr->value()));
  }
  return {};
}

Result<void> outputs(State& state) {
  // torchrun's workers inherit its stdin (torch/distributed/elastic/
  // multiprocessing: subprocess.Popen without stdin=): every rank reads it,
  // here each its own copy.
  if (!state.launch.overrides.stdin_ranks) {
    state.launch.overrides.stdin_ranks = "all";
  }
  if (state.tee && state.tee->value() != "0" && !state.launch.overrides.log_dir) {
    return option_error(*state.tee, "ddl writes rank logs to --log-dir: add --log-dir DIR");
  }
  if (!state.local_ranks.empty()) {
    state.launch.plan_edits.push_back([ranks = state.local_ranks](JobSpec& job, const PlanView& view) -> Result<void> {
      std::vector<int> shown;
      for (const RankSlot& slot : view.plan.ranks) {
        if (ranks.contains(slot.local_rank)) {
          shown.push_back(slot.rank);
        }
      }
      if (shown.empty()) {
        return fail(ExitCode::usage, "--local-ranks-filter: no rank of this job has one of these local ranks");
      }
      std::string problem;
      job.output_ranks = *parse_rank_list(compress_ranks(shown), problem);
      return {};
    });
  }
  return {};
}

Result<void> program(State& state, std::vector<std::string> words, const Machine& machine) {
  if (words.empty()) {
    return fail(ExitCode::usage, "no training script: ddl torchrun [options] SCRIPT [args] (or -m MODULE)");
  }
  if (state.no_python && state.module && !state.run_path) {
    return fail(ExitCode::usage, "Don't use both the '--no-python' flag and the '--module' flag at the same time.");
  }
  Interpreter interpreter = state.run_path || !state.no_python ? Interpreter::python_script : Interpreter::none;
  if (state.module && !state.run_path) {
    interpreter = Interpreter::python_module;
  }
  // torchrun runs the script with sys.executable.
  state.launch.job_edits.push_back(program_edit(std::move(words), interpreter, state.python, {},
                                                [machine](const std::string& name) {
                                                  return python_on_path(name, machine);
                                                }));
  return {};
}

} // namespace

std::span<const Option> torchrun_options() { return table(); }

std::vector<HabitSpelling> torchrun_run_habits() {
  return habit_spellings(table(), {{nproc_per_node, RunHabit::ranks_per_host},
                                   {nnodes, RunHabit::node_count},
                                   {node_rank, RunHabit::node_rank},
                                   {master_port, RunHabit::master_port},
                                   {master_addr, RunHabit::master_addr},
                                   {rdzv_endpoint, RunHabit::rendezvous},
                                   {rdzv_backend, RunHabit::rendezvous}});
}

Result<Launch> read_torchrun(const std::vector<std::string>& args, const Machine& machine) {
  State state;
  auto words = read_words(table(), args, "torchrun", Dashes::double_only,
                          [&state](const Given& given) { return read_option(given, state); },
                          from_environment(machine));
  if (!words) {
    return fail(words.error());
  }
  if (state.launch.help) {
    return std::move(state.launch);
  }
  Launch& launch = state.launch;
  launch.job_edits.push_back(ensure_framework(Framework::torch));
  // torchrun sets no CUDA_VISIBLE_DEVICES: each rank picks cuda:LOCAL_RANK.
  launch.job_edits.push_back([](JobSpec& job) { job.launch.bind_gpus = false; });
  if (state.run_id && !launch.overrides.name) {
    launch.overrides.name = *state.run_id;
  }
  std::optional<int> per_host;
  if (auto done = per_node(state, machine, per_host); !done) {
    return fail(done.error());
  }
  if (auto done = node_count(state, per_host); !done) {
    return fail(done.error());
  }
  if (auto done = rendezvous_place(state); !done) {
    return fail(done.error());
  }
  if (auto done = outputs(state); !done) {
    return fail(done.error());
  }
  if (auto done = program(state, std::move(*words), machine); !done) {
    return fail(done.error());
  }
  launch.plan_edits.push_back(whole_env_here());
  return std::move(state.launch);
}

std::string torchrun_help() {
  return help_text(
      {"torchrun", "[options] SCRIPT [args] | -m MODULE [args]",
       "ddl torchrun: a torchrun command line, run by ddl on every host at once", "torchrun's options (PyTorch 2.9)",
       "  ddl torchrun --standalone --nnodes=1 --nproc-per-node=4 train.py --epochs 3\n"
       "  ddl torchrun -H node1,node2 --nnodes=2 --nproc-per-node=8 train.py\n"
       "  ddl torchrun --nnodes=1:4 --nproc-per-node=8 --max-restarts=3 --hostfile hosts train.py\n"},
      table());
}

} // namespace ddl::persona
