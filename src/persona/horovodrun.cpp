// SPDX-License-Identifier: MIT
// `ddl horovodrun`; see src/persona/horovodrun.hpp. The flag table is
// parse_args() of Horovod 0.28.1's horovod/runner/launch.py; the variables
// are its common/util/config_parser.py's set_env_from_args.
#include "src/persona/horovodrun.hpp"

#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl::persona {

namespace {

enum Flag {
  version = 1, num_proc, check_build, disable_cache, start_timeout, network_interfaces, network_interface,
  output_filename, verbose, config_file, ssh_port, ssh_identity_file, min_np, max_np, slots_per_host,
  elastic_timeout, reset_limit, blacklist_cooldown_range, mpi_args, binding_args, tcp, prefix_timestamp, hosts,
  hostfile, host_discovery_script, gloo, mpi, jsrun,
  // Tuning: each one Horovod variable.
  fusion_threshold_mb = 100, cycle_time_ms, cache_capacity, hierarchical_allreduce, no_hierarchical_allreduce,
  hierarchical_allgather, no_hierarchical_allgather, torus_allreduce, no_torus_allreduce, autotune, no_autotune,
  autotune_log_file, autotune_warmup_samples, autotune_steps_per_sample, autotune_bayes_opt_max_samples,
  autotune_gaussian_process_noise, timeline_filename, timeline_mark_cycles, no_timeline_mark_cycles,
  no_stall_check, stall_check, stall_check_warning_time_seconds, stall_check_shutdown_time_seconds,
  mpi_threads_disable, no_mpi_threads_disable, num_nccl_streams, thread_affinity, gloo_timeout_seconds,
  log_level, log_with_timestamp, log_without_timestamp, log_hide_timestamp, no_log_hide_timestamp
};

// How a tuning flag becomes its variable: a count (>= 0), a number (>= 0),
// text, or a fixed value for a switch.
enum class Kind { count, number, text, set };
struct Tuning {
  int id;
  std::string_view variable;
  Kind kind;
  std::string_view value = "";  // Kind::set
};

constexpr std::array k_tunings = {
    Tuning{fusion_threshold_mb, "HOROVOD_FUSION_THRESHOLD", Kind::count},  // MB -> bytes below
    Tuning{cycle_time_ms, "HOROVOD_CYCLE_TIME", Kind::number},
    Tuning{cache_capacity, "HOROVOD_CACHE_CAPACITY", Kind::count},
    Tuning{hierarchical_allreduce, "HOROVOD_HIERARCHICAL_ALLREDUCE", Kind::set, "1"},
    Tuning{no_hierarchical_allreduce, "HOROVOD_HIERARCHICAL_ALLREDUCE", Kind::set, "0"},
    Tuning{hierarchical_allgather, "HOROVOD_HIERARCHICAL_ALLGATHER", Kind::set, "1"},
    Tuning{no_hierarchical_allgather, "HOROVOD_HIERARCHICAL_ALLGATHER", Kind::set, "0"},
    Tuning{torus_allreduce, "HOROVOD_TORUS_ALLREDUCE", Kind::set, "1"},
    Tuning{no_torus_allreduce, "HOROVOD_TORUS_ALLREDUCE", Kind::set, "0"},
    Tuning{autotune, "HOROVOD_AUTOTUNE", Kind::set, "1"},
    Tuning{no_autotune, "HOROVOD_AUTOTUNE", Kind::set, ""},
    Tuning{autotune_log_file, "HOROVOD_AUTOTUNE_LOG", Kind::text},
    Tuning{autotune_warmup_samples, "HOROVOD_AUTOTUNE_WARMUP_SAMPLES", Kind::count},
    Tuning{autotune_steps_per_sample, "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE", Kind::count},
    Tuning{autotune_bayes_opt_max_samples, "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES", Kind::count},
    Tuning{autotune_gaussian_process_noise, "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", Kind::number},
    Tuning{timeline_filename, "HOROVOD_TIMELINE", Kind::text},
    Tuning{timeline_mark_cycles, "HOROVOD_TIMELINE_MARK_CYCLES", Kind::set, "1"},
    Tuning{no_timeline_mark_cycles, "HOROVOD_TIMELINE_MARK_CYCLES", Kind::set, "0"},
    Tuning{no_stall_check, "HOROVOD_STALL_CHECK_DISABLE", Kind::set, "1"},
    Tuning{stall_check, "HOROVOD_STALL_CHECK_DISABLE", Kind::set, "0"},
    Tuning{stall_check_warning_time_seconds, "HOROVOD_STALL_CHECK_TIME_SECONDS", Kind::count},
    Tuning{stall_check_shutdown_time_seconds, "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS", Kind::count},
    Tuning{mpi_threads_disable, "HOROVOD_MPI_THREADS_DISABLE", Kind::set, "1"},
    Tuning{no_mpi_threads_disable, "HOROVOD_MPI_THREADS_DISABLE", Kind::set, "0"},
    Tuning{num_nccl_streams, "HOROVOD_NUM_NCCL_STREAMS", Kind::count},
    Tuning{thread_affinity, "HOROVOD_THREAD_AFFINITY", Kind::count},
    Tuning{gloo_timeout_seconds, "HOROVOD_GLOO_TIMEOUT_SECONDS", Kind::count},
    Tuning{log_level, "HOROVOD_LOG_LEVEL", Kind::text},
    Tuning{log_with_timestamp, "HOROVOD_LOG_HIDE_TIME", Kind::set, "0"},
    Tuning{log_without_timestamp, "HOROVOD_LOG_HIDE_TIME", Kind::set, "1"},
    Tuning{log_hide_timestamp, "HOROVOD_LOG_HIDE_TIME", Kind::set, "1"},
    Tuning{no_log_hide_timestamp, "HOROVOD_LOG_HIDE_TIME", Kind::set, "0"},
};

std::vector<Option> make_table() {
  std::vector<Option> rows = {
      {{"-v", "--version"}, Arity::flag, "", "Refused: ask Horovod (python3 -c 'import horovod')", version},
      {{"-np", "--num-proc"}, Arity::value, "N", "Ranks (default: every slot)", num_proc},
      {{"-cb", "--check-build"}, Arity::flag, "", "Refused: run horovodrun --check-build", check_build},
      {{"--disable-cache"}, Arity::flag, "", "Accepted; ddl caches no checks", disable_cache},
      {{"--start-timeout"}, Arity::value, "S", "[rendezvous] timeout (default: HOROVOD_START_TIMEOUT)", start_timeout},
      {{"--network-interfaces"}, Arity::value, "NIC,...", "HOROVOD_GLOO_IFACE, GLOO_ and NCCL_SOCKET_IFNAME",
       network_interfaces},
      {{"--network-interface"}, Arity::value, "NIC", "The same, one NIC (repeatable)", network_interface},
      {{"--output-filename"}, Arity::value, "DIR", "ddl's DIR/rank-R.attempt-A.stdout.log and .stderr.log",
       output_filename},
      {{"--verbose"}, Arity::flag, "", "ddl -v", verbose},
      {{"--config-file"}, Arity::value, "FILE", "Refused: write the options on the command line", config_file},
      {{"-p", "--ssh-port"}, Arity::value, "PORT", "[ssh] port", ssh_port},
      {{"-i", "--ssh-identity-file"}, Arity::value, "FILE", "[ssh] identity", ssh_identity_file},
      {{"--fusion-threshold-mb"}, Arity::value, "MB", "HOROVOD_FUSION_THRESHOLD (in bytes)", fusion_threshold_mb},
      {{"--cycle-time-ms"}, Arity::value, "MS", "HOROVOD_CYCLE_TIME", cycle_time_ms},
      {{"--cache-capacity"}, Arity::value, "N", "HOROVOD_CACHE_CAPACITY", cache_capacity},
      {{"--hierarchical-allreduce"}, Arity::flag, "", "HOROVOD_HIERARCHICAL_ALLREDUCE=1", hierarchical_allreduce},
      {{"--no-hierarchical-allreduce"}, Arity::flag, "", "HOROVOD_HIERARCHICAL_ALLREDUCE=0",
       no_hierarchical_allreduce},
      {{"--hierarchical-allgather"}, Arity::flag, "", "HOROVOD_HIERARCHICAL_ALLGATHER=1", hierarchical_allgather},
      {{"--no-hierarchical-allgather"}, Arity::flag, "", "HOROVOD_HIERARCHICAL_ALLGATHER=0",
       no_hierarchical_allgather},
      {{"--torus-allreduce"}, Arity::flag, "", "HOROVOD_TORUS_ALLREDUCE=1", torus_allreduce},
      {{"--no-torus-allreduce"}, Arity::flag, "", "HOROVOD_TORUS_ALLREDUCE=0", no_torus_allreduce},
      {{"--autotune"}, Arity::flag, "", "HOROVOD_AUTOTUNE=1 (and the --autotune-* variables)", autotune},
      {{"--no-autotune"}, Arity::flag, "", "No autotuning", no_autotune},
      {{"--autotune-log-file"}, Arity::value, "FILE", "HOROVOD_AUTOTUNE_LOG", autotune_log_file},
      {{"--autotune-warmup-samples"}, Arity::value, "N", "HOROVOD_AUTOTUNE_WARMUP_SAMPLES", autotune_warmup_samples},
      {{"--autotune-steps-per-sample"}, Arity::value, "N", "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE",
       autotune_steps_per_sample},
      {{"--autotune-bayes-opt-max-samples"}, Arity::value, "N", "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES",
       autotune_bayes_opt_max_samples},
      {{"--autotune-gaussian-process-noise"}, Arity::value, "X", "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE",
       autotune_gaussian_process_noise},
      {{"--min-np", "--min-num-proc"}, Arity::value, "N", "ddl's elastic range: at least N ranks", min_np},
      {{"--max-np", "--max-num-proc"}, Arity::value, "N", "ddl's elastic range: at most N ranks", max_np},
      {{"--slots-per-host"}, Arity::value, "N", "[hosts] slots: for hosts given without a count", slots_per_host},
      {{"--elastic-timeout"}, Arity::value, "S", "Accepted; ddl restarts on the hosts left at once", elastic_timeout},
      {{"--reset-limit"}, Arity::value, "N", "--max-restarts N", reset_limit},
      {{"--blacklist-cooldown-range"}, Arity::two_values, "MIN MAX", "Accepted; a lost host stays out of the job",
       blacklist_cooldown_range},
      {{"--timeline-filename"}, Arity::value, "FILE", "HOROVOD_TIMELINE", timeline_filename},
      {{"--timeline-mark-cycles"}, Arity::flag, "", "HOROVOD_TIMELINE_MARK_CYCLES=1", timeline_mark_cycles},
      {{"--no-timeline-mark-cycles"}, Arity::flag, "", "HOROVOD_TIMELINE_MARK_CYCLES=0", no_timeline_mark_cycles},
      {{"--no-stall-check"}, Arity::flag, "", "HOROVOD_STALL_CHECK_DISABLE=1", no_stall_check},
      {{"--stall-check"}, Arity::flag, "", "HOROVOD_STALL_CHECK_DISABLE=0", stall_check},
      {{"--stall-check-warning-time-seconds"}, Arity::value, "S", "HOROVOD_STALL_CHECK_TIME_SECONDS",
       stall_check_warning_time_seconds},
      {{"--stall-check-shutdown-time-seconds"}, Arity::value, "S", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS",
       stall_check_shutdown_time_seconds},
      {{"--mpi-threads-disable"}, Arity::flag, "", "HOROVOD_MPI_THREADS_DISABLE=1", mpi_threads_disable},
      {{"--no-mpi-threads-disable"}, Arity::flag, "", "HOROVOD_MPI_THREADS_DISABLE=0", no_mpi_threads_disable},
      {{"--mpi-args"}, Arity::value, "ARGS", "With --mpi: mpirun's options", mpi_args},
      {{"--tcp"}, Arity::flag, "", "NCCL_IB_DISABLE=1", tcp},
      {{"--binding-args"}, Arity::value, "ARGS", "With --mpi: mpirun's binding options", binding_args},
      {{"--num-nccl-streams"}, Arity::value, "N", "HOROVOD_NUM_NCCL_STREAMS", num_nccl_streams},
      {{"--thread-affinity"}, Arity::value, "N", "HOROVOD_THREAD_AFFINITY", thread_affinity},
      {{"--gloo-timeout-seconds"}, Arity::value, "S", "HOROVOD_GLOO_TIMEOUT_SECONDS", gloo_timeout_seconds},
      {{"--log-level"}, Arity::value, "LEVEL", "HOROVOD_LOG_LEVEL (TRACE DEBUG INFO WARNING ERROR FATAL)", log_level},
      {{"--log-with-timestamp"}, Arity::flag, "", "HOROVOD_LOG_HIDE_TIME=0", log_with_timestamp},
      {{"--log-without-timestamp"}, Arity::flag, "", "HOROVOD_LOG_HIDE_TIME=1", log_without_timestamp},
      {{"--log-hide-timestamp"}, Arity::flag, "", "HOROVOD_LOG_HIDE_TIME=1 (deprecated)", log_hide_timestamp},
      {{"--no-log-hide-timestamp"}, Arity::flag, "", "HOROVOD_LOG_HIDE_TIME=0 (deprecated)", no_log_hide_timestamp},
      {{"-prefix-timestamp", "--prefix-output-with-timestamp"}, Arity::flag, "", "ddl --timestamps",
       prefix_timestamp},
      {{"-H", "--hosts"}, Arity::value, "HOST:N,...", "The hosts and their slots", hosts},
      {{"-hostfile", "--hostfile"}, Arity::value, "FILE", "Hosts, `host slots=N` lines", hostfile},
      {{"--host-discovery-script"}, Arity::value, "SCRIPT", "[hosts] discovery_script (elastic)",
       host_discovery_script},
      {{"--gloo"}, Arity::flag, "", "ddl starts the ranks, Horovod's Gloo rendezvous (the default)", gloo},
      {{"--mpi"}, Arity::flag, "", "The mpirun backend (Open MPI)", mpi},
      {{"--jsrun"}, Arity::flag, "", "Refused: LSF's jsrun is not a ddl backend", jsrun},
  };
  return with_ddl_options(std::move(rows), {DdlOption::backend, DdlOption::job, DdlOption::name,
                                           DdlOption::ssh_config, DdlOption::timeout, DdlOption::dry_run,
                                           DdlOption::quiet, DdlOption::stdin_ranks, DdlOption::preflight, DdlOption::no_preflight, DdlOption::help});
}

const std::vector<Option>& table() {
  static const std::vector<Option> rows = make_table();
  return rows;
}

struct State {
  Launch launch;
  std::optional<int> np;
  std::optional<int> least;
  std::optional<int> most;
  std::vector<std::string> nics;
  std::vector<std::string> mpirun_args;
  std::optional<std::string> start_timeout;
  std::string controller;  // "", "gloo" or "mpi"
  bool discovery = false;  // --host-discovery-script
  std::map<std::string, std::string> tuned;  // variable -> value, the last flag wins
  std::vector<std::string> tuned_order;
};

Result<void> read_tuning(const Given& given, const Tuning& tuning, State& state) {
  std::string value = tuning.kind == Kind::set ? std::string(tuning.value) : given.value();
  if (tuning.kind == Kind::count) {
    auto count = int_value(given, 0, INT32_MAX);
    if (!count) {
      return fail(count.error());
    }
    value = std::to_string(tuning.id == fusion_threshold_mb ? static_cast<long long>(*count) * 1024 * 1024 : *count);
  } else if (tuning.kind == Kind::number) {
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    const bool noise = tuning.id == autotune_gaussian_process_noise;
    if (value.empty() || *end != 0 || number < 0 || (noise && number > 1)) {
      return option_error(given, noise ? "must be a number in [0, 1]" : "must be a number >= 0");
    }
  } else if (tuning.id == log_level) {
    static const std::vector<std::string> levels = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "FATAL"};
    if (std::ranges::find(levels, value) == levels.end()) {
      return option_error(given, "not one of TRACE, DEBUG, INFO, WARNING, ERROR, FATAL");
    }
  }
  const std::string variable(tuning.variable);
  if (!state.tuned.contains(variable)) {
    state.tuned_order.push_back(variable);
  }
  state.tuned[variable] = value;
  return {};
}

Result<void> read_refused(const Given& given) {
  switch (given.option->id) {
  case version:
    return option_error(given, "ddl is not Horovod: python3 -c 'import horovod; print(horovod.__version__)'");
  case check_build:
    return option_error(given, "ddl cannot see how Horovod was built: run horovodrun --check-build itself");
  case config_file:
    return option_error(given, "ddl does not read Horovod's YAML config: write its settings as options");
  case jsrun: return option_error(given, "LSF's jsrun is not a ddl backend: use --gloo (ddl's own) or --mpi");
  default: return {};
  }
}

Result<void> read_count(const Given& given, std::optional<int>& out, long long least = 1) {
  auto count = int_value(given, least, INT32_MAX);
  if (!count) {
    return fail(count.error());
  }
  out = *count;
  return {};
}

Result<void> read_value(const Given& given, State& state) {
  Launch& launch = state.launch;
  Overrides& o = launch.overrides;
  std::optional<int> number;
  switch (given.option->id) {
  case num_proc: return read_count(given, state.np);
  case min_np: return read_count(given, state.least);
  case max_np: return read_count(given, state.most);
  case start_timeout: state.start_timeout = given.value(); return {};
  case network_interfaces:
  case network_interface:
    for (const std::string& nic : split(given.value(), ',')) {
      if (!nic.empty() && std::ranges::find(state.nics, nic) == state.nics.end()) {
        state.nics.push_back(nic);
      }
    }
    return {};
  case output_filename:
    o.log_dir = given.value();
    o.split_logs = true;
    return {};
  case ssh_port:
    if (auto read = read_count(given, number); !read || *number > 65535) {
      return read ? option_error(given, "must be between 1 and 65535") : read;
    }
    launch.job_edits.push_back([p = *number](JobSpec& job) { job.ssh.port = p; });
    return {};
  case ssh_identity_file:
    launch.job_edits.push_back([path = given.value()](JobSpec& job) { job.ssh.identity = path; });
    return {};
  case slots_per_host:
    if (auto read = read_count(given, number); !read) {
      return read;
    }
    launch.job_edits.push_back([n = *number](JobSpec& job) { job.hosts.slots = n; });
    return {};
  case reset_limit:
    if (auto read = read_count(given, number, 0); !read) {
      return read;
    }
    o.max_restarts = *number;
    return {};
  case elastic_timeout: return read_count(given, number, 0);
  case blacklist_cooldown_range: {
    auto low = parse_int(given.values[0]);
    auto high = parse_int(given.values[1]);
    return low && high && *low <= *high ? Result<void>{} : option_error(given, "not MIN MAX seconds");
  }
  case mpi_args:
  case binding_args: {
    auto words = shell_words(given);
    if (!words) {
      return fail(words.error());
    }
    state.mpirun_args.insert(state.mpirun_args.end(), words->begin(), words->end());
    return {};
  }
  case hosts: o.hosts.push_back(given.value()); return {};
  case hostfile: o.hostfile = given.value(); return {};
  case host_discovery_script:
    state.discovery = true;
    launch.job_edits.push_back([script = given.value()](JobSpec& job) {
      job.hosts.list.clear();
      job.hosts.hostfile.clear();
      job.hosts.slurm = SlurmHosts::off;
      job.hosts.discovery_script = script;
    });
    return {};
  default: return read_refused(given);
  }
}

Result<void> read_option(const Given& given, State& state) {
  std::optional<std::string> no_python;
  if (apply_ddl_option(given, state.launch, no_python)) {
    return {};
  }
  for (const Tuning& tuning : k_tunings) {
    if (tuning.id == given.option->id) {
      return read_tuning(given, tuning, state);
    }
  }
  switch (given.option->id) {
  case verbose: ++state.launch.verbose; return {};
  case tcp: return read_tuning(given, Tuning{tcp, "NCCL_IB_DISABLE", Kind::set, "1"}, state);
  case prefix_timestamp: state.launch.overrides.timestamps = true; return {};
  case gloo:
  case mpi:
    if (!state.controller.empty() && state.controller != given.spelled.substr(2)) {
      return fail(ExitCode::usage, "--gloo and --mpi: choose one");
    }
    state.controller = given.spelled.substr(2);
    return {};
  case disable_cache: return {};
  default: return read_value(given, state);
  }
}

// -np and the elastic range (--min-np, --max-np: ddl's --np MIN:MAX).
Result<void> rank_count(State& state) {
  Overrides& o = state.launch.overrides;
  if (!state.least && !state.most) {
    if (state.np) {
      o.np = std::to_string(*state.np);
    }
    return {};
  }
  const std::optional<int> low = state.least ? state.least : state.np;
  const std::optional<int> high = state.most ? state.most : state.np ? state.np : low;
  if (!low || !high) {
    return fail(ExitCode::usage, "--max-np: needs -np or --min-np too");
  }
  if (*low > *high) {
    return fail(ExitCode::usage, fmt::format("--min-np {} is more than --max-np {}", *low, *high));
  }
  o.np = fmt::format("{}:{}", *low, *high);
  return {};
}

// The variables horovodrun gives every rank (autotune's only with --autotune,
// the timeline's marks only with a timeline), the NICs, and the controller.
void rank_env(State& state, const Machine& machine) {
  const bool autotuned = state.tuned.contains("HOROVOD_AUTOTUNE") && state.tuned["HOROVOD_AUTOTUNE"] == "1";
  const bool timeline = state.tuned.contains("HOROVOD_TIMELINE");
  for (const std::string& variable : state.tuned_order) {
    if ((variable.starts_with("HOROVOD_AUTOTUNE") && !autotuned) ||
        (variable == "HOROVOD_TIMELINE_MARK_CYCLES" && !timeline)) {
      continue;
    }
    state.launch.overrides.env.push_back(variable + "=" + state.tuned[variable]);
  }
  if (!state.nics.empty()) {
    std::string joined;
    for (const std::string& nic : state.nics) {
      joined += (joined.empty() ? "" : ",") + nic;
    }
    state.launch.overrides.env.push_back("HOROVOD_GLOO_IFACE=" + state.nics.front());
    state.launch.overrides.env.push_back("GLOO_SOCKET_IFNAME=" + state.nics.front());
    state.launch.overrides.env.push_back("NCCL_SOCKET_IFNAME=" + joined);
    if (state.controller == "mpi") {
      state.mpirun_args.insert(state.mpirun_args.end(), {"--mca", "btl_tcp_if_include", joined});
    }
  }
  const char* timeout = machine.getenv("HOROVOD_START_TIMEOUT");
  if (!state.start_timeout && timeout != nullptr) {
    state.start_timeout = timeout;
  }
}

Result<void> controller(State& state) {
  // Horovod's elastic mode needs Gloo (horovodrun runs it on Gloo whatever
  // the controller asked for); ddl's mpirun backend starts one fixed world.
  if (state.controller == "mpi" && (state.least || state.most || state.discovery)) {
    return fail(ExitCode::usage, "--mpi: elastic Horovod (--min-np, --max-np, --host-discovery-script) runs on Gloo, "
                                 "as horovodrun runs it; drop --mpi (ddl's Gloo restarts the gang on the hosts left), "
                                 "or the elastic options for one MPI world");
  }
  if (state.start_timeout) {
    auto seconds = parse_int(*state.start_timeout);
    if (!seconds || *seconds < 1) {
      return fail(ExitCode::usage,
                  fmt::format("--start-timeout {}: not a whole number of seconds", *state.start_timeout));
    }
    state.launch.job_edits.push_back([s = *seconds](JobSpec& job) { job.rendezvous.timeout = Millis{s * 1000}; });
  }
  const bool with_mpi = state.controller == "mpi";
  state.launch.job_edits.push_back([with_mpi, args = state.mpirun_args](JobSpec& job) {
    if (with_mpi) {
      job.launch.backend = BackendKind::mpirun;
    } else if (job.launch.backend == BackendKind::mpirun) {
      job.launch.backend = BackendKind::automatic;  // Gloo: ddl starts the ranks itself
    }
    job.mpirun.args.insert(job.mpirun.args.end(), args.begin(), args.end());
    // horovodrun's ranks run unbuffered and get its whole environment, its
    // PATH too on other hosts (`python train.py` is this machine's python).
    if (std::ranges::none_of(job.env, [](const auto& kv) { return kv.first == "PYTHONUNBUFFERED"; })) {
      job.env.emplace_back("PYTHONUNBUFFERED", "1");
    }
    job.env_pass.emplace_back("*");
    job.env_pass.emplace_back("PATH");
  });
  return {};
}

} // namespace

std::span<const Option> horovodrun_options() { return table(); }

Result<Launch> read_horovodrun(const std::vector<std::string>& args, const Machine& machine) {
  State state;
  auto words = read_words(table(), args, "horovodrun", Dashes::double_only,
                          [&state](const Given& given) { return read_option(given, state); });
  if (!words) {
    return fail(words.error());
  }
  if (state.launch.help) {
    return std::move(state.launch);
  }
  if (words->empty()) {
    return fail(ExitCode::usage, "no command: ddl horovodrun [options] COMMAND [args]");
  }
  if (auto done = rank_count(state); !done) {
    return fail(done.error());
  }
  rank_env(state, machine);
  if (auto done = controller(state); !done) {
    return fail(done.error());
  }
  state.launch.job_edits.push_back(ensure_framework(Framework::horovod));
  state.launch.job_edits.push_back(program_edit(std::move(*words), Interpreter::none, std::nullopt));
  return std::move(state.launch);
}

std::string horovodrun_help() {
  return help_text({"horovodrun", "[options] COMMAND [args]",
                    "ddl horovodrun: a horovodrun command line, run by ddl on every host at once",
                    "horovodrun's options (Horovod 0.28.1)",
                    "  ddl horovodrun -np 4 -H localhost:4 python train.py\n"
                    "  ddl horovodrun -np 16 -H server1:4,server2:4,server3:4,server4:4 python train.py\n"
                    "  ddl horovodrun -np 8 --min-np 4 --max-np 12 --host-discovery-script ./discover.sh "
                    "python train.py\n"},
                   table());
}

} // namespace ddl::persona
