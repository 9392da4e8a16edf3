// SPDX-License-Identifier: MIT
// `ddl mpirun`; see src/persona/mpirun.hpp. The flag table is Open MPI
// 4.1's mpirun(1) (the options ddl users bring; others are refused by name).
#include "src/persona/mpirun.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl::persona {

namespace {

enum Flag {
  np = 1, host, hostfile, export_env, mca, gmca, bind_to, map_by, rank_by, npernode, oversubscribe, wdir, tag_output,
  timestamp_output, output_filename, allow_run_as_root, quiet, verbose, timeout, do_not_launch, prefix,
  report_bindings, display_map, version
};

std::vector<Option> make_table() {
  std::vector<Option> rows = {
      {{"-np", "--np", "-n", "--n", "-c"}, Arity::value, "N", "Ranks (default: every slot)", np},
      {{"-H", "--host", "-host"}, Arity::value, "HOST[:N],...", "The hosts and their slots", host},
      {{"--hostfile", "--machinefile"}, Arity::value, "FILE", "Hosts, `host slots=N` lines", hostfile},
      {{"-x"}, Arity::value, "NAME[=VALUE]", "Set NAME, or pass it from ddl's environment", export_env},
      {{"--mca"}, Arity::two_values, "KEY VALUE", "Given to mpirun", mca},
      {{"--gmca"}, Arity::two_values, "KEY VALUE", "Given to mpirun", gmca},
      {{"--bind-to"}, Arity::value, "WHAT", "Given to mpirun", bind_to},
      {{"--map-by"}, Arity::value, "slot|node|ppr:N:node|core...", "Where ranks go: node deals them over the hosts",
       map_by},
      {{"--rank-by"}, Arity::value, "slot|node|core...", "How ranks are numbered: node deals them over the hosts",
       rank_by},
      {{"-N", "--npernode"}, Arity::value, "N", "Ranks on every host", npernode},
      {{"--oversubscribe"}, Arity::flag, "", "More ranks than slots: the rest shared out over the hosts",
       oversubscribe},
      {{"--wdir", "-wd"}, Arity::value, "DIR", "[job] workdir: the ranks start there", wdir},
      {{"--tag-output"}, Arity::flag, "", "Accepted; ddl tags every line with its rank", tag_output},
      {{"--timestamp-output"}, Arity::flag, "", "ddl --timestamps", timestamp_output},
      {{"--output-filename"}, Arity::value, "DIR", "ddl's DIR/rank-R.attempt-A.stdout.log and .stderr.log",
       output_filename},
      {{"--allow-run-as-root"}, Arity::flag, "", "Accepted; ddl adds it when root", allow_run_as_root},
      {{"-q", "--quiet"}, Arity::flag, "", "ddl -q", quiet},
      {{"-v", "--verbose"}, Arity::flag, "", "ddl -v", verbose},
      {{"--timeout"}, Arity::value, "S", "End the whole job after S seconds; exit 124", timeout},
      {{"--do-not-launch"}, Arity::flag, "", "ddl --dry-run", do_not_launch},
      {{"--prefix"}, Arity::value, "DIR", "Given to mpirun (Open MPI's install prefix)", prefix},
      {{"--report-bindings"}, Arity::flag, "", "Given to mpirun", report_bindings},
      {{"--display-map"}, Arity::flag, "", "Given to mpirun", display_map},
      {{"-V", "--version"}, Arity::flag, "", "Refused: run mpirun --version", version},
  };
  return with_ddl_options(std::move(rows), {DdlOption::job, DdlOption::name, DdlOption::ssh_config,
                                           DdlOption::dry_run, DdlOption::stdin_ranks, DdlOption::preflight, DdlOption::no_preflight, DdlOption::help});
}

const std::vector<Option>& table() {
  static const std::vector<Option> rows = make_table();
  return rows;
}

struct State {
  Launch launch;
  std::vector<std::string> args;  // for mpirun itself
};

// mpirun -x: NAME=VALUE sets it; NAME passes ddl's own value (mpirun warns
// and goes on when there is none).
Result<void> read_export(const Given& given, State& state, const Machine& machine) {
  const std::string& text = given.value();
  const std::size_t equals = text.find('=');
  const std::string name = text.substr(0, equals);
  if (!is_env_name(name)) {
    return option_error(given, "not NAME or NAME=VALUE");
  }
  if (equals != std::string::npos) {
    state.launch.overrides.env.push_back(text);
    return {};
  }
  if (machine.getenv(name.c_str()) == nullptr) {
    state.launch.warnings.push_back(fmt::format("-x {}: not in ddl's environment, so not passed (as mpirun warns "
                                                "and goes on)",
                                                name));
  }
  state.launch.job_edits.push_back([name](JobSpec& job) { job.env_pass.push_back(name); });
  return {};
}

std::string lowered(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// --map-by: in the plan, for every backend. node (and --rank-by node) deals
// the ranks round-robin over the hosts (placement.by_node; the mpirun backend
// then gives mpirun --map-by node itself); slot, core, ppr:N:node fill hosts
// one after another as ddl does (given to mpirun too). seq, dist, rankfile
// and span have no plan of ddl's.
Result<void> read_map_by(const Given& given, State& state) {
  const std::vector<std::string> parts = split(given.value(), ':');
  const std::string policy = lowered(parts.front());
  const bool spans =
      std::ranges::any_of(parts, [](const std::string& part) { return part == "span" || part == "SPAN"; });
  if (policy == "node" && parts.size() == 1) {
    state.launch.job_edits.push_back([](JobSpec& job) { job.placement.by_node = true; });
    return {};
  }
  if (policy == "node" || policy == "seq" || policy == "dist" || policy == "rankfile" || spans) {
    return option_error(given, "is not in ddl's plan: use --map-by slot, node, core or ppr:N:node, or -N N");
  }
  if (policy == "ppr" && parts.size() >= 3 && parts[2] == "node") {
    auto count = parse_int(parts[1]);
    if (!count || *count < 1) {
      return option_error(given, "ppr:N:node needs a number N");
    }
    state.launch.job_edits.push_back([n = static_cast<int>(*count)](JobSpec& job) { job.hosts.slots_each = n; });
  }
  state.args.insert(state.args.end(), {"--map-by", given.value()});
  return {};
}

Result<void> read_value(const Given& given, State& state, const Machine& machine) {
  Overrides& o = state.launch.overrides;
  switch (given.option->id) {
  case np: o.np = given.value(); return {};
  case host: o.hosts.push_back(given.value()); return {};
  case hostfile: o.hostfile = given.value(); return {};
  case export_env: return read_export(given, state, machine);
  case mca:
  case gmca:
    state.args.insert(state.args.end(), {std::string(given.option->names.front()), given.values[0], given.values[1]});
    return {};
  case bind_to:
  case prefix:
    state.args.insert(state.args.end(), {std::string(given.option->names.front()), given.value()});
    return {};
  case map_by: return read_map_by(given, state);
  case rank_by: {
    const std::string policy = lowered(given.value());
    if (policy == "node") {
      state.launch.job_edits.push_back([](JobSpec& job) { job.placement.by_node = true; });
    } else if (policy != "slot" && policy != "core" && policy != "hwthread" && policy != "socket" &&
               policy != "numa" && policy != "board") {
      return option_error(given, "is not one of slot, node, core, hwthread, socket, numa, board");
    }
    return {};
  }
  case npernode: {
    auto count = int_value(given, 1, 100'000);
    if (!count) {
      return fail(count.error());
    }
    state.launch.job_edits.push_back([n = *count](JobSpec& job) { job.hosts.slots_each = n; });
    return {};
  }
  case wdir: state.launch.job_edits.push_back([dir = given.value()](JobSpec& job) { job.workdir = dir; }); return {};
  case output_filename:
    o.log_dir = given.value();
    o.split_logs = true;
    return {};
  case timeout: {
    auto seconds = int_value(given, 1, INT32_MAX);
    if (!seconds) {
      return fail(seconds.error());
    }
    o.timeout = std::to_string(*seconds) + "s";
    return {};
  }
  default: return option_error(given, "ddl is not Open MPI: run mpirun --version");
  }
}

Result<void> read_option(const Given& given, State& state, const Machine& machine) {
  std::optional<std::string> no_python;
  if (apply_ddl_option(given, state.launch, no_python)) {
    return {};
  }
  switch (given.option->id) {
  case oversubscribe:
    state.launch.job_edits.push_back([](JobSpec& job) { job.placement.oversubscribe = true; });
    return {};
  case report_bindings:
  case display_map: state.args.emplace_back(given.option->names.front()); return {};
  case tag_output:
  case allow_run_as_root: return {};
  case timestamp_output: state.launch.overrides.timestamps = true; return {};
  case quiet: state.launch.quiet = true; return {};
  case verbose: ++state.launch.verbose; return {};
  case do_not_launch: state.launch.dry_run = true; return {};
  default: return read_value(given, state, machine);
  }
}

} // namespace

std::span<const Option> mpirun_options() { return table(); }

Result<Launch> read_mpirun(const std::vector<std::string>& args, const Machine& machine) {
  State state;
  auto words = read_words(table(), args, "mpirun", Dashes::single_too,
                          [&](const Given& given) { return read_option(given, state, machine); });
  if (!words) {
    return fail(words.error());
  }
  if (state.launch.help) {
    return std::move(state.launch);
  }
  if (words->empty()) {
    return fail(ExitCode::usage, "no program: ddl mpirun [options] PROGRAM [args]");
  }
  if (std::ranges::find(*words, ":") != words->end()) {
    return fail(ExitCode::usage, "mpirun's ':' (several programs in one job) is not ddl's: ddl runs one program "
                                 "on every rank");
  }
  state.launch.job_edits.push_back([args = state.args](JobSpec& job) {
    job.launch.backend = BackendKind::mpirun;
    job.mpirun.args.insert(job.mpirun.args.end(), args.begin(), args.end());
  });
  state.launch.job_edits.push_back(ensure_framework(Framework::mpi));
  state.launch.job_edits.push_back(program_edit(std::move(*words), Interpreter::none, std::nullopt));
  return std::move(state.launch);
}

std::string mpirun_help() {
  return help_text({"mpirun", "[options] PROGRAM [args]",
                    "ddl mpirun: an Open MPI mpirun command line, run by ddl's mpirun backend",
                    "mpirun's options (Open MPI 4.1; long ones with one dash too: -np, -host, -wdir)",
                    "  ddl mpirun -np 4 ./ring_c\n"
                    "  ddl mpirun -H node1:2,node2:2 -x LD_LIBRARY_PATH --mca btl self,vader,tcp python3 -m "
                    "mpi4py.bench helloworld\n"
                    "  ddl mpirun --hostfile hosts -N 8 --bind-to core ./app\n"},
                   table());
}

} // namespace ddl::persona
