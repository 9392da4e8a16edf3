// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/inventory/inventory.hpp"
#include "src/plan/placement.hpp"
#include "src/plan/plan.hpp"
#include "src/render/container.hpp"
#include "src/render/launches.hpp"
#include "src/util/error.hpp"
#include "src/util/topology.hpp"

namespace ddl {

enum class Stream { out, err };

// How a rank ended. `launch_error` non-empty: it never ran (exit 3 class).
struct RankExit {
  RankExit(int code_ = 0, int signal_ = 0, std::string launch_error_ = {}, std::string stopped_by_ = {})
      : code(code_), signal(signal_), launch_error(std::move(launch_error_)), stopped_by(std::move(stopped_by_)) {}
  int code;       // exit status when it exited
  int signal;     // signal number when it was killed (code is then 128+signal)
  std::string launch_error;
  std::string stopped_by;  // who stopped it from outside (the scheduler), and why
  bool ran = false;        // with launch_error: the program had started (its host was lost under it)
};

// Where a backend reports what its ranks do. Called from any thread; the
// implementation is thread-safe.
class RankEvents {
public:
  virtual ~RankEvents() = default;
  virtual void started(int rank, long pid) = 0;
  // Raw bytes as they arrive (not lines); the supervisor assembles lines.
  virtual void output(int rank, Stream stream, std::string_view bytes) = 0;
  // Exactly once per started rank, after its last output.
  virtual void exited(int rank, const RankExit& how) = 0;
};

// What Backend::start did with a gang: launches [0, started) run, and each
// of them reports its end through RankEvents; when fewer than all started,
// `error` says why launch `started` did not: a launch error (ExitCode::launch),
// or stop::error() when Ctrl-C or the job's deadline came before it.
struct GangStart {
  std::size_t started = 0;
  std::optional<Error> error;
};

// What `hosts --check` reports per host.
struct HostCheck {
  bool reachable = false;
  std::string ddl_version;       // "" when ddl is not found there
  std::optional<int> gpu_count;  // nvidia-smi -L, else /proc/driver/nvidia/gpus
  std::string error;             // "" when all is well
};

// One way to start a gang (local, ssh, kubernetes, mpirun, slurm). Backends
// see the rendered launches (argv, env, workdir per rank), never the job
// file; what they are asked besides launching has a default here, so that the
// callers never test which backend they hold. The gang is launched and
// signalled as a whole (PRRTE's plm: spawn(job), signal_job); two skeletons
// implement that part: backends/per_rank_backend.hpp for backends that start
// each rank themselves, backends/launcher_backend.hpp for those that hand the
// gang to a launcher (mpirun, srun).
class Backend {
public:
  virtual ~Backend() = default;

  // The backend's name as the job file spells it ("ssh"), for messages.
  virtual std::string_view name() const = 0;
  // The hosts the backend brings itself (Kubernetes pods); nullopt: the
  // job's own host source. Default: nullopt.
  virtual std::optional<Result<Inventory>> own_hosts() { return std::nullopt; }
  // Each host's address as the backend will reach it, for hosts whose source
  // gave only a name (the ssh config's HostName for an alias, as `ssh -G`
  // says). Default: the hosts unchanged.
  virtual Inventory resolve_addresses(Inventory hosts) { return hosts; }
  // slots = "gpus": each host's slots and GPU indices from its GPU count;
  // hosts that cannot be probed or have none are reported at once
  // (ExitCode::launch). Default: the hosts unchanged (their slots stand).
  virtual Result<Inventory> probe_gpus(Inventory hosts) { return hosts; }
  // `hosts --check`: one entry per host, in order. Default: "--check is not
  // available for the NAME backend" on every host.
  virtual std::vector<HostCheck> check(const Inventory& hosts);
  // Elastic preflight: per host, in order, "" when the backend reaches it,
  // else why not. A host that fails is left out of the plan. Default: every
  // host "" (the backend cannot look; prepare() reports problems).
  virtual std::vector<std::string> preflight(const Inventory& hosts) {
    return std::vector<std::string>(hosts.size());
  }
  // torch.master_port on rank 0's `host`, looked at there: `first` 0 finds
  // `count` free consecutive ports; else the run from `first` is checked and
  // a port in use is an error (ExitCode::launch) naming it. nullopt: this
  // backend cannot look (the port is then `first`, else 29500).
  virtual std::optional<Result<int>> master_port(const Host& host, int first, int count);
  // The file `path` as rank `launch` sees it, when it was written at or
  // after `since` and holds at most `max_bytes`; nullopt when it is absent,
  // older, larger or unreadable. Default: nullopt (the local backend reads
  // it here).
  virtual std::optional<std::string> read_rank_file(const RankLaunch& launch, const std::string& path,
                                                    std::chrono::system_clock::time_point since,
                                                    std::size_t max_bytes);
  // Per host, in order: the interface holding the address that the host's
  // own route to `target` (rank 0's address) leaves from, found on that host
  // itself (interface names may differ between hosts). A host where none was
  // found has an empty name and says why; its ranks then get no interface
  // variables. Default: an empty list (the backend does not look; no host
  // gets the variables).
  virtual std::vector<HostInterface> find_interfaces(const Inventory& hosts, const std::string& target);
  // [launch] bind: per host, in order, its CPU topology read on the host
  // itself (topology_script()); a host that cannot be read is unknown and
  // says why (its ranks run unbound). Default: every host unknown, "the
  // NAME backend does not read host topology".
  virtual std::vector<HostTopology> read_topology(const Inventory& hosts);
  // [launch] bind_gpus in a launch: per host, in order, how many GPUs it
  // has (nvidia-smi -L, else /proc/driver/nvidia/gpus), counted over the
  // connection the launch keeps to it, never one of its own; nullopt where
  // not counted. Default: an empty list (the backend does not look; the
  // plan's GPUs stand).
  virtual std::vector<std::optional<int>> gpu_counts(const Inventory& /*hosts*/) { return {}; }
  // True when every rank runs on this machine whatever the host names say
  // (the rendezvous then binds loopback). Default: false.
  virtual bool ranks_are_local() const { return false; }
  // True when the backend starts the ranks as one MPI world (mpirun):
  // Horovod then uses MPI, not its gloo rendezvous. Default: false.
  virtual bool starts_mpi_world() const { return false; }
  // True when the backend starts each rank itself, outside any launcher
  // (local, ssh, kubernetes): an MPI program there is a world of one (an
  // MPI singleton), so more than one such rank gets the singleton guard
  // (src/render/frameworks/mpi.hpp). Default: false.
  virtual bool starts_ranks_alone() const { return false; }
  // Where [container] can run this backend's ranks (src/render/container.hpp):
  // guarded (local, ssh), in its pods' own containers (kubernetes), or not
  // at all. Default: none.
  virtual ContainerHost container_host() const { return ContainerHost::none; }
  // True when the launcher itself serves PMIx to the ranks (slurm: srun
  // --mpi=pmix, slurmstepd), so that --mpi pmix starts no host workers of
  // ddl's. Default: false.
  virtual bool serves_pmix() const { return false; }
  // True when a gang may run on any subset of the hosts the backend found (a
  // sweep's trial on some of them). Default: true; kubernetes: false (its
  // hosts are every pod of the selector).
  virtual bool takes_host_subsets() const { return true; }
  // True when a sweep's trials reach the hosts through the sweep's session
  // broker (backends/ssh/ssh_broker: one connection per host for all the
  // trials). Default: false; ssh: true.
  virtual bool shares_sweep_broker() const { return false; }
  // The ddl binary that ranks run (`ddl bench` workers). Default: this one.
  virtual std::string ddl_path() const;
  // What `run --dry-run` prints after the plan table. Default: nothing.
  virtual std::string dry_run_text(std::span<const RankLaunch> launches);

  // Reaches every host before any rank starts and checks what attempt 0's
  // `launches` need there (workdir, argv[0]); reports every unreachable
  // host, auth failure, key mismatch or missing command at once
  // (ExitCode::launch).
  virtual Result<void> prepare(const Plan& plan, std::span<const RankLaunch> launches) = 0;
  // After prepare() failed: the hosts it could not reach although they had
  // passed the preflight (a connect or channel that failed or timed out),
  // each with why. An elastic job ([launch] min_np) leaves them out as lost
  // hosts and starts on the rest. Default: none.
  virtual std::vector<LeftOutHost> unreached_hosts() const;
  // Starts the gang: `launches` in rank order (every rank of the plan, as
  // built for this attempt). Their output and ends arrive through `events`.
  virtual GangStart start(std::span<const RankLaunch> launches, RankEvents& events) = 0;
  // Sends `signo` once to every rank of the gang still running (each rank's
  // whole process group, wherever it runs). Every call is delivered: two
  // calls send the signal twice.
  virtual void signal_all(int signo) = 0;
  // The watchdog's dump (watchdog.dump a tool, not a signal): asks the
  // rank's host to run the stack dumper (backends/stack_dump) with `tool`
  // on the rank, its output onto the rank's own stderr, in the background,
  // killed after `timeout` and when the rank ends. False when this backend
  // cannot (the watchdog then says so). Default: false.
  virtual bool dump_stacks(int rank, DumpTool tool, Millis timeout);
  // The launch that follows the next one goes to the same hosts (the
  // preflight's check, then the job): keep what makes it start sooner.
  // Default: nothing; ssh: ddl's relay on each host, kept with its
  // connection, so that the job starts no login shell there.
  virtual void expect_another_launch() {}
  // Ends whatever still runs (KILL) and releases connections. Idempotent;
  // prepare() and start() may follow (an elastic re-plan on the same backend).
  virtual void shutdown() = 0;
};

} // namespace ddl
