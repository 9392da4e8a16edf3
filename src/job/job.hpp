// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/util/duration.hpp"
#include "src/util/env.hpp"
#include "src/util/error.hpp"
#include "src/util/rank_list.hpp"
#include "src/job/hostlist.hpp"
#include "src/job/job_preflight.hpp"
#include "src/job/limits.hpp"
#include "src/job/sweep_spec.hpp"

namespace ddl {



// `automatic` is "auto": the registry (backends/registry.hpp) picks one of
// the others from the hosts and frameworks.
enum class BackendKind { automatic, local, ssh, kubernetes, mpirun, slurm };
enum class HostKeyCheck { yes, accept_new, no };
// [hosts] slurm: automatic (key absent) reads the allocation when SLURM_JOB_ID
// is set and no other host source is given; on (true, --slurm) always; off
// (false) never.
enum class SlurmHosts { automatic, on, off };
enum class Framework { torch, tensorflow, horovod, jax, mpi };

struct HostsSection {
  std::vector<HostSpec> list;     // hostlist specs ("node[01-04]:8") expanded, in order
  std::string hostfile;           // OpenMPI/DeepSpeed or MPICH form
  SlurmHosts slurm = SlurmHosts::automatic;  // read SLURM_JOB_NODELIST and friends
  std::string discovery_script;   // prints host[:slots] lines
  Millis discovery_timeout{60'000};
  std::optional<int> slots;       // per host when the spec has none
  bool slots_from_gpus = false;   // slots = "gpus": probe each host
  std::string include;            // --include "host1:0,1@host2" (DeepSpeed's form)
  std::string exclude;            // --exclude, the same form
  bool show_labels = false;       // not a key: `ddl hosts` reads labels that cost a call, to show them
  // Not keys: what the personalities (src/persona) ask of the hosts found.
  std::optional<int> max_hosts;   // only the first N hosts (torchrun's --nnodes, DeepSpeed's --num_nodes)
  std::optional<int> slots_each;  // every host runs N ranks, whatever its source says (--nproc-per-node, -N)
};

// How many ranks: [launch] np and min_np, or --np N (the most) or MIN:MAX.
// Elastic restarts (min set): a lost host is left out and the gang
// restarts on the hosts left when they still have `min` slots.
struct NpRange {
  std::optional<int> max;         // np; nullopt: the sum of the slots
  std::optional<int> min;         // min_np; nullopt: not elastic (a plain np is MIN = MAX)
  bool elastic() const { return min.has_value(); }
};

// [launch] bind (issue 31): each local rank pinned to its share of the
// host's CPUs (core), to a NUMA node (numa) or to its GPU's node (gpu).
enum class CpuBind { none, core, numa, gpu };

struct LaunchSection {
  BackendKind backend = BackendKind::automatic;
  NpRange np;
  bool bind_gpus = true;
  std::optional<int> max_host_losses;  // nullopt: min_np is the only limit
  int host_failures = 0;          // a host whose ranks fail this often is lost; 0: never
  std::vector<int> restart_on;    // non-empty: only these exit codes restart
  std::vector<int> fail_on;       // these exit codes never restart
  Millis backoff{0};              // before restart N: backoff * 2^(N-1), at most 1 min
  CpuBind bind = CpuBind::none;   // bind and --bind: each rank pinned to its CPUs
  // Not a key: every rank sees all of its host's slot ids in
  // CUDA_VISIBLE_DEVICES and picks its own by LOCAL_RANK (DeepSpeed's way).
  bool host_gpus = false;
};

// [placement]: which hosts get ranks and in what order (src/plan/placement.hpp).
enum class PlacementStrategy { in_order, pack, spread };
struct PlacementSection {
  PlacementStrategy strategy = PlacementStrategy::in_order;  // key absent: hosts in order
  Labels constraints;             // hosts whose labels do not match are left out
  std::string order;              // a label: hosts sharing its value get adjacent ranks
  // Not keys: mpirun's mapping (ddl mpirun --map-by node / --rank-by node,
  // --oversubscribe), in the plan for every backend.
  bool by_node = false;           // ranks dealt round-robin over the hosts, full ones skipped
  bool oversubscribe = false;     // np above the slots: the extra ranks shared out over the hosts
};

struct SshSection {
  std::string user;               // empty: current user / ssh config
  std::optional<int> port;        // empty: 22 / ssh config
  std::string identity;
  std::string config = "~/.ssh/config";  // "none" skips it
  std::string known_hosts = "~/.ssh/known_hosts";
  HostKeyCheck host_key_check = HostKeyCheck::yes;
  Millis connect_timeout{10'000};
  int fanout = 64;
  std::string remote_ddl;         // empty: the launcher's own path
  // Not a job-file key: the unix socket of the sweep's session broker, from
  // a trial's request.json; its channels then replace the trial's own
  // connections (backends/ssh/broker_wire.hpp).
  std::string broker;
};

struct KubernetesSection {
  std::string namespace_ = "default";
  std::string selector;
  std::string container;
  std::string kubectl = "kubectl";
  std::string context;
};

struct SlurmSection {
  std::vector<std::string> srun_args;  // passed to srun before ddl's own options
  std::string partition;               // not used: ddl requests no allocation (error)
};

// mpirun's own options, given to the mpirun backend's mpirun (`ddl mpirun`'s
// --mca, --bind-to, ...; DESIGN's [mpirun] args).
// Which MPI's mpirun the mpirun backend drives: auto (asks `mpirun
// --version`), Open MPI's, or MPICH's Hydra (its own spellings).
enum class MpiFlavour { automatic, openmpi, mpich };

struct MpirunSection {
  std::vector<std::string> args;  // [mpirun] args, then the personalities'
  MpiFlavour flavour = MpiFlavour::automatic;
};

// [mpi] launch: how the ranks of an MPI program become one world (issue 33).
// mpirun: through mpirun (backend mpirun, or auto for the mpi framework);
// pmix: ddl hosts a PMIx server on each host and starts the ranks itself
// (local, ssh, kubernetes), or srun --mpi=pmix does (slurm); automatic: pmix
// where it is proven (cmd/pmix_launch's resolve_mpi_launch), else mpirun.
enum class MpiLaunch { mpirun, pmix, automatic };
struct MpiSection {
  MpiLaunch launch = MpiLaunch::mpirun;
};

struct RendezvousSection {
  std::string address = "auto";
  int port = 0;
  Millis timeout{300'000};
};

struct TorchSection {
  int master_port = 0;            // 0: a free port, looked for on rank 0's host
};

// [tensorflow] success: `chief` (where there is a chief): the chief's clean end
// ends the job, the other tasks (ps, and the workers of ParameterServerStrategy,
// which serve forever) get the stop signal and their ends are no failures, as
// Kubeflow's TFJob; `all`: every rank must end.
enum class TfSuccess { chief, all };

struct TensorflowSection {
  int chief = 1;
  int ps = 0;
  int evaluator = 0;
  int port = 2222;
  TfSuccess success = TfSuccess::chief;
};

// [watchdog]: a job that makes no progress is dumped and ended (issue 17).
// Off unless `stall` or `straggler` is set.
enum class ProgressSource { any_line, regex, heartbeat };
// How a stalled rank's stacks are taken on its host (watchdog.dump): "auto"
// tries py-spy, then gdb, then Python's faulthandler (SIGABRT to a Python
// rank started with PYTHONFAULTHANDLER=1); "py-spy" and "gdb" use that tool
// alone. A signal name instead sets dump_signal.
enum class DumpTool { automatic, py_spy, gdb };
std::string_view dump_tool_name(DumpTool tool);  // "auto", "py-spy", "gdb"

struct WatchdogSection {
  std::optional<Millis> stall;      // no rank made progress for this long
  std::optional<Millis> straggler;  // one rank's progress lags the newest by this much
  ProgressSource progress = ProgressSource::any_line;  // heartbeats count in every mode
  std::string progress_regex;       // ProgressSource::regex (ECMAScript syntax)
  DumpTool dump_tool = DumpTool::automatic;  // when dump_signal is 0
  int dump_signal = 0;              // 0: dump_tool; else the signal that asks for a stack dump
  Millis dump_timeout{30'000};
  bool enabled() const { return stall.has_value() || straggler.has_value(); }
};

// How ranks are stopped and asked to checkpoint (issue 17).
struct StopSection {
  int stop_signal = 15;             // SIGTERM: what ends ranks (then SIGKILL after grace)
  int checkpoint_signal = 0;        // 0: none; sent first on SIGTERM to ddl and the timeout
  Millis checkpoint_grace{60'000};  // how long ranks get to exit after it
  std::optional<int> requeue_exit_code;  // a rank exit code that means "requeue me"
};

// [container] (issue 31): every rank runs in `image`, through the runtime's
// `run` on its host (src/render/container.hpp).
enum class ContainerRuntime { podman, docker, apptainer, custom };

struct ContainerSection {
  std::string image;                   // "" = no container
  ContainerRuntime runtime = ContainerRuntime::podman;
  std::vector<std::string> custom;     // runtime = [...]: the words, with {image} {name} {workdir} {gpus} {command}
  std::vector<std::string> mounts;     // "SOURCE:TARGET[:OPTIONS]"
  std::vector<std::string> options;    // extra words for `run`, after ddl's own
  std::string workdir;                 // inside the container; "" = the image's own
  bool enabled() const { return !image.empty(); }
};

// One [host_env."PATTERN"] table: variables for the hosts PATTERN matches
// (a glob on host names, or "label=value" with a glob on the value).
struct HostEnv {
  std::string pattern;
  EnvList env;
};

// --stdin R|all|none: the ranks that read ddl's stdin, as mpirun's --stdin
// and srun's --input (default rank 0); the others read /dev/null.
struct StdinRanks {
  enum class Kind { one, all, none };
  Kind kind = Kind::one;
  int rank = 0;
  bool reads(int r) const { return kind == Kind::all || (kind == Kind::one && r == rank); }
};

// The whole validated job: the job file merged with command-line overrides.
struct JobSpec {
  std::string source;             // job file path, or "" when options alone
  std::string name;               // default: file stem, else "ddl"
  std::vector<std::string> command;
  bool command_is_shell = false;  // true: command[0] is run by /bin/sh -c
  std::string workdir;            // default: the launcher's cwd
  std::string python = "python3"; // the interpreter the personalities run scripts with
  EnvList env;                    // [job] env, then -x (which also stays in env_cli)
  std::vector<std::string> env_pass;  // names or NAME_* globs
  // The team's environment (issue 31); a rank's env is [job] env, then
  // env_file's, then its host's host_env tables, then -x.
  std::string setup;              // a shell line run before the program, where it runs
  std::string env_file;           // [job] env_file or --env-file, as given ("" = none)
  EnvList env_file_vars;          // what env_file holds (read when the job is loaded)
  std::vector<HostEnv> host_env;  // in file order: a later table wins
  EnvList env_cli;                // -x K=V, applied last
  ContainerSection container;
  std::vector<Framework> frameworks{Framework::torch};
  std::optional<Millis> timeout;
  int max_restarts = 0;
  Millis grace{10'000};
  std::string log_dir;
  bool strict_logs = false;       // a failed log write makes ddl exit 3
  // How rank lines are shown (issue 19; read in job_output.cpp).
  RankList output_ranks;          // only these ranks on ddl's stdout/stderr; empty: all
  std::string prefix;             // a LinePrefix template; "": ddl's "[{rank}] "
  bool timestamps = false;        // a UTC time before each rank line shown
  bool split_logs = false;        // stdout and stderr in separate rank logs
  bool fold = false;              // identical whole outputs of ranks shown once (dshbak -c)
  StdinRanks stdin_ranks;         // --stdin: which ranks read ddl's stdin (default rank 0)
  StopSection stop;               // [job] stop_signal, checkpoint_*, requeue_exit_code

  HostsSection hosts;
  LaunchSection launch;
  PlacementSection placement;
  SshSection ssh;
  KubernetesSection kubernetes;
  SlurmSection slurm;
  MpirunSection mpirun;
  MpiSection mpi;
  RendezvousSection rendezvous;
  TorchSection torch;
  TensorflowSection tensorflow;
  std::optional<SweepSection> sweep;  // [sweep], for `ddl sweep`; other commands ignore it
  WatchdogSection watchdog;
  PreflightSection preflight;  // [preflight] (issue 43)
};

// Whether the host sources read the labels that cost a call (Kubernetes node
// labels: `kubectl get nodes`; Slurm features: `scontrol show node`): not at
// all, to show them (`ddl hosts`; a failure is a warning), or because
// [placement] uses labels (constraints or order; a failure stops the job, as
// a host without its labels would silently meet or miss a constraint).
enum class LabelNeed { none, shown, required };
LabelNeed label_need(const JobSpec& job);

// Command-line options that override the job file (DESIGN.md "Command line").
struct Overrides {
  std::vector<std::string> hosts;          // -H, may repeat; comma lists
  std::optional<std::string> hostfile;
  bool slurm = false;                      // --slurm: the Slurm allocation
  std::optional<std::string> backend;      // validated like the file's key
  std::optional<std::string> include;      // --include host1:0,1@host2
  std::optional<std::string> exclude;      // --exclude
  std::optional<std::string> np;           // --np: "N" or "MIN:MAX" (elastic), read into JobSpec::launch.np
  std::optional<std::string> timeout;      // duration text
  std::optional<int> max_restarts;
  std::optional<std::string> log_dir;
  bool strict_logs = false;                // --strict-logs
  std::optional<std::string> output_ranks; // --output-ranks
  std::optional<std::string> prefix;       // --prefix
  bool timestamps = false;                 // --timestamps
  bool split_logs = false;                 // --split-logs
  bool fold = false;                       // --fold
  std::optional<std::string> stdin_ranks;  // --stdin R|all|none
  std::vector<std::string> env;            // -x K=V
  std::optional<std::string> env_file;     // --env-file FILE
  std::optional<std::string> bind;         // --bind none|core|numa|gpu
  std::vector<std::string> command;        // after --
  std::optional<std::string> name;         // --name (default: the job file's stem)
  std::optional<std::string> ssh_config;   // -F/--ssh-config FILE ([ssh] config)
  std::optional<std::string> mpi;          // --mpi mpirun|pmix ([mpi] launch)
  bool preflight = false;                  // --preflight: [preflight] enabled = true
  bool no_preflight = false;               // --no-preflight: enabled = false
};


// Reads, parses and validates `path` (may be empty: options alone), applies
// `overrides`, and reports every problem at once, one per line, as
// "FILE:LINE:COL: message". Errors have ExitCode::usage.
Result<JobSpec> load_job(const std::string& path, const Overrides& overrides);

// The job file's text as load_job reads it (size-capped; errors name `path`
// and have ExitCode::usage): what `ddl sweep` keeps as its snapshot.
Result<std::string> read_job_file(const std::string& path);

// The same from text already in memory (`origin` names it in messages).
Result<JobSpec> parse_job(std::string_view text, const std::string& origin,
                          const Overrides& overrides);



// A host name ddl accepts: not empty, no leading '-', no space or shell
// metacharacter. Returns the reason when not.
std::optional<std::string> host_name_problem(std::string_view name);

// For run and bench: an error when `job` has no command (neither [job] command
// nor words after "--"). Loading does not require one: render and hosts don't.
Result<void> require_command(const JobSpec& job);

// Whether `framework` is among the job's frameworks.
bool uses_framework(const JobSpec& job, Framework framework);

std::string_view to_string(BackendKind kind);
std::string_view to_string(Framework framework);
std::optional<BackendKind> parse_backend(std::string_view text);
// Every value of [launch] backend and --backend, in order ("auto" first).
const std::vector<std::string>& backend_names();
std::string_view to_string(HostKeyCheck check);
std::string_view to_string(MpiLaunch launch);
std::optional<MpiLaunch> parse_mpi_launch(std::string_view text);
// Every value of [mpi] launch and --mpi, in order.
const std::vector<std::string>& mpi_launch_names();
std::string_view to_string(PlacementStrategy strategy);
std::string_view to_string(CpuBind bind);
std::string_view to_string(ContainerRuntime runtime);
// Every value of [launch] bind and --bind, in order ("none" first).
const std::vector<std::string>& bind_names();

} // namespace ddl
