// SPDX-License-Identifier: MIT
#pragma once

// Personalities (PRRTE calls them "schizo"): another launcher's command line
// (torchrun, mpirun, horovodrun, DeepSpeed's) read into ddl's one job
// description, so that `ddl torchrun ...` is the user's torchrun line with
// ddl's gang semantics underneath. Each launcher's flags live in one file of
// this folder, with the peer's version they were taken from; what they all
// share (the table-driven word splitter, ddl's own options, the checks that
// need the plan) lives here.
//
// A personality yields a Launch: Overrides for what `ddl run` also has, then
// edits of the loaded JobSpec for the peer's own meanings (they win over the
// job file, as command-line options do), then edits that need the plan
// (where ranks run, rank 0's host). The pipeline is the one `ddl run` uses.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/job/job.hpp"
#include "src/plan/plan.hpp"
#include "src/util/error.hpp"

namespace ddl::persona {

// What a personality may ask of the machine it runs on (tests fake it).
struct Machine {
  std::function<const char*(const char*)> getenv;
  std::function<bool(const std::string&)> is_file;  // a regular file is there
  std::string cwd;
  std::string home;
  int cpus = 1;
  std::function<int()> gpus;  // this machine's GPUs, counted when asked
  std::function<Result<EnvList>(const std::string&)> env_file;  // read_env_file
};

// The real machine: getenv, the file system, CPU and GPU counts.
Machine this_machine();

enum class Arity { flag, value, two_values };

// One option of a launcher's command line, every spelling of it.
struct Option {
  std::vector<std::string_view> names;  // "--nproc-per-node", "--nproc_per_node"
  Arity arity = Arity::flag;
  std::string_view value_name;          // shown in --help: "N|gpu|cpu|auto"
  std::string_view help;                // what ddl makes of it
  int id = 0;                           // the personality's own enum value
};

// What `ddl run` answers when one of a launcher's options is written on its
// own line out of habit (cmd/habits refuses it, in ddl run's words, and
// names the personality that takes the whole line).
enum class RunHabit { ranks_per_host, node_count, node_rank, master_port, master_addr, rendezvous };

// One spelling of a launcher's option, and what it means to `ddl run`.
struct HabitSpelling {
  std::string_view spelling;
  RunHabit habit;
};

// Every spelling of the options of `table` that `habits` names by id.
std::vector<HabitSpelling> habit_spellings(std::span<const Option> table,
                                           std::initializer_list<std::pair<int, RunHabit>> habits);

// One option as given: its spelling ("--nproc_per_node", or "PET_NNODES" for
// one from the environment) and its values.
struct Given {
  const Option* option = nullptr;
  std::string spelled;
  std::vector<std::string> values;
  const std::string& value() const { return values.front(); }
};

// Open MPI takes its long options with one dash as well (-np, -host).
enum class Dashes { double_only, single_too };

// The words of a command line: its options in order, then the program and
// its arguments (from the first word that is no option, or after "--").
struct Words {
  std::vector<Given> options;
  std::vector<std::string> program;
};

// Splits `args` by `table`. An unknown option is a usage error naming
// `command` ("ddl torchrun"), with "did you mean" when one is close; so is a
// missing value or a value given to a flag.
Result<Words> split_words(std::span<const Option> table, const std::vector<std::string>& args,
                          std::string_view command, Dashes dashes);

// split_words, then `read` for each option in order, those of `before`
// first (options given another way: torchrun's PET_ variables): the
// program's words, or the first error.
using ReadOption = std::function<Result<void>(const Given&)>;
Result<std::vector<std::string>> read_words(std::span<const Option> table, const std::vector<std::string>& args,
                                            std::string_view command, Dashes dashes, const ReadOption& read,
                                            std::vector<Given> before = {});

// A usage error about one option: "SPELLED VALUE: why".
Unexpected option_error(const Given& given, std::string_view why);

// "N" as an int in [min, max], or a usage error naming the option.
Result<int> int_value(const Given& given, long long min, long long max);

// A value that holds several words, as a shell splits them ("--map-by
// ppr:6:node", quotes and backslashes as sh reads them; no expansion).
Result<std::vector<std::string>> shell_words(const Given& given);

// How the program's words become each rank's argv.
enum class Interpreter { none, python_script, python_module };

// Plan-time rules and edits: the plan, and whether its ranks run on this
// machine (the local backend) or elsewhere.
struct PlanView {
  const Plan& plan;
  bool ranks_here = false;
};
using JobEdit = std::function<void(JobSpec&)>;
using PlanEdit = std::function<Result<void>(JobSpec&, const PlanView&)>;

// A launcher's command line, read.
struct Launch {
  std::string job_file;             // ddl's --job FILE
  Overrides overrides;              // ddl's own options, and the peer's that `ddl run` has
  std::vector<JobEdit> job_edits;   // the peer's meanings, applied over the job file in order
  std::vector<PlanEdit> plan_edits; // checks and edits that need the plan
  std::vector<std::string> warnings;  // printed once the log level is set (as the peer warns)
  bool dry_run = false;
  bool help = false;
  int verbose = 0;
  bool quiet = false;
};

// ddl's own options that every personality takes unless its launcher spells
// one of them otherwise: --job, --dry-run, --name, -F/--ssh-config,
// --timeout, -v/--verbose, -q/--quiet, -h/--help, --stdin; and, by choice of
// each personality, --backend, -H/--hosts, --hostfile, --python.
enum class DdlOption {
  job = 1000, dry_run, name, ssh_config, timeout, verbose, quiet, help, backend, hosts, hostfile, python, stdin_ranks,
  preflight, no_preflight
};
// The table rows of `wanted`, in the order given.
std::vector<Option> ddl_options(std::initializer_list<DdlOption> wanted);
// A launcher's `rows` followed by ddl's own `wanted` ones.
std::vector<Option> with_ddl_options(std::vector<Option> rows, std::initializer_list<DdlOption> wanted);
// Applies one of ddl's own options to `launch` (python: to `python`); false
// when `given` is not one of them.
bool apply_ddl_option(const Given& given, Launch& launch, std::optional<std::string>& python);

// What differs per rank in a launcher's argv, which ddl's one argv for
// every rank gets through a small /bin/sh wrapper: FLAG=$LOCAL_RANK right
// after the script (DeepSpeed's --local_rank), and sh `exports` run first.
struct PerRank {
  std::string local_rank_flag;  // "--local_rank", or "" for none
  std::string exports;          // e.g. export CROSS_RANK="$GROUP_RANK"
};

// The argv of a Python launcher's ranks: PYTHON -u [-m] PROGRAM ARGS (as
// torchrun and DeepSpeed run it), or PROGRAM ARGS for Interpreter::none.
// `python` is --python, else [job] python, which when a bare name (python3,
// the default) becomes `locate`'s answer if it has one (python_on_path: the
// launcher's own interpreter, as torchrun and DeepSpeed run sys.executable
// on every node).
using Locate = std::function<std::optional<std::string>(const std::string&)>;
JobEdit program_edit(std::vector<std::string> program, Interpreter interpreter,
                     std::optional<std::string> python, PerRank per_rank = {}, Locate locate = {});

// The full path of NAME in this machine's PATH (the first regular file
// there), as a shell would find it; nullopt for a NAME with a slash or not found.
std::optional<std::string> python_on_path(const std::string& name, const Machine& machine);

// Adds `framework` to the job's frameworks unless it is there.
JobEdit ensure_framework(Framework framework);

// Ranks on this machine get the launcher's whole environment, as a
// launcher's local workers inherit it (remote ranks keep ddl's rule).
PlanEdit whole_env_here();

// "--nnodes 2" (`shown`) asks for at least `least` hosts: fewer is a usage
// error that lists the job's hosts and says how to name more.
PlanEdit at_least_hosts(int least, std::string shown);

// A host that a launcher option names as rank 0's (torchrun's --master-addr,
// a --rdzv-endpoint, DeepSpeed's --master_addr): it must be this machine or
// the job's first host, where ddl puts rank 0 and MASTER_ADDR; else a usage
// error saying why and what to write instead.
PlanEdit rank0_host_is(std::string host, std::string shown);

// "host", "host:port", "[v6]:port" -> host and port ("" when none).
std::pair<std::string, std::string> host_and_port(std::string_view endpoint);

// --help of a personality: usage, the launcher's options (`peer`: "torchrun
// (PyTorch 2.9)"), ddl's own, and examples.
struct HelpText {
  std::string_view command;   // "torchrun"
  std::string_view usage;     // "[options] SCRIPT | -m MODULE [args]"
  std::string_view summary;   // one line
  std::string_view peer;      // "torchrun's options (PyTorch 2.9, torch/distributed/run.py)"
  std::string_view examples;  // lines, each "  ddl torchrun ..."
};
std::string help_text(const HelpText& text, std::span<const Option> table);

} // namespace ddl::persona
