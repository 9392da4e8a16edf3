// SPDX-License-Identifier: MIT
// ddl as the PMIx server of one host (issue 33): MPI ranks that ddl starts
// itself find their job through it, with no mpirun or orted anywhere.
//
// Design, from Slurm's src/plugins/mpi/pmix (slurmstepd hosts one server per
// node and step), PRRTE's src/prted/pmix (prted, one per node) and OpenPMIx's
// pmix_server.h:
// - Library: OpenPMIx's server API (libpmix.so.2, OpenPMIx 4 or later), opened
//   with dlopen like libmpi and NCCL; a build without the PMIx headers, or a
//   host without the library, gets a clear error and nothing else changes.
// - Server: PMIx_server_init with PMIX_SERVER_TMPDIR and PMIX_SYSTEM_TMPDIR set
//   to a folder made with mkdtemp and named after the host
//   ($TMPDIR/ddl-pmix.HOST.XXXXXX), so that hosts sharing /tmp never meet
//   (Slurm's fixed /tmp/spmix_appdir_UID_JOB.STEP collides when test nodes
//   share /tmp); no tool or system-wide rendezvous files; PMIX_HOSTNAME is the
//   host's name in the node map. PMIx answers clients on 127.0.0.1 (its tcp
//   URI reaches the ranks through PMIx_server_setup_fork).
// - Namespace: PMIx_server_register_nspace with this host's rank count and
//   the keys of layout.hpp. Open MPI 4.1 (orte/mca/ess/pmi/ess_pmi_module.c)
//   requires PMIX_LOCAL_RANK and PMIX_NODE_RANK per rank and PMIX_MAX_PROCS
//   and PMIX_JOB_SIZE for the job; it reads PMIX_APPNUM, PMIX_LOCAL_SIZE,
//   PMIX_NUM_NODES, PMIX_TMPDIR, PMIX_NSDIR, PMIX_TDIR_RMCLEAN and, when more
//   than one rank shares the host, PMIX_LOCAL_PEERS (shared-memory wire-up)
//   when present; ompi/proc reads each rank's PMIX_HOSTNAME, MPI_UNIVERSE_SIZE
//   comes from PMIX_UNIV_SIZE. PMIX_LOCALITY_STRING and PMIX_CPUSET describe a
//   binding: ddl binds nothing, so they are left out and Open MPI calls every
//   local peer "on the node", as under Slurm without binding. The PMIx library
//   builds its node and process views from PMIX_NODE_MAP and PMIX_PROC_MAP
//   (PMIx_generate_regex / PMIx_generate_ppn, as Slurm does). Every local rank
//   is registered with PMIx_server_register_client (this user's uid and gid).
// - Launch environment: PMIx_server_setup_fork gives PMIX_NAMESPACE,
//   PMIX_RANK, PMIX_SERVER_URI*, the security and gds modules and the tmpdirs.
//   Open MPI 4.1 believes it was direct-launched only under a resource manager
//   its schizo framework knows (Slurm, Flux, JSM); anywhere else schizo/orte
//   calls the process a singleton, which forks an orted of its own. So each
//   rank also gets OMPI_MCA_schizo=ompi (that component declines for an
//   application, leaving the launch "undetermined") and OMPI_MCA_ess=pmi:
//   the rank then initializes from PMIx alone. Open MPI 5 reads PMIx itself.
//   OMPI_MCA_btl_vader_backing_directory is this host's own shared-memory
//   folder (session_dir.hpp: Open MPI names its segments after the machine,
//   so two hosts of the job on one machine would share them).
// - Hosts of one machine: each host's PMIx name is its hostname, or
//   HOSTNAME-ddlI where hosts share one (make_host_names_unique), so node
//   map, PMIX_HOSTNAME and folders stay one per host.
// - Callbacks (PMIx calls them on its own thread; each returns at once):
//   client_connected and client_finalized are reported; abort reports the
//   rank, its status and message (the whole gang ends: ddl ignores the proc
//   subset, as Slurm does); fence_nb hands this host's contribution to the
//   host, which returns every host's contributions concatenated in any order
//   (only fences over the whole namespace: Open MPI's MPI_Init, barrier and
//   MPI_Finalize fences); direct_modex is not supported (Open MPI 4.1 gathers
//   all data in MPI_Init's fence, PMIX_COLLECT_DATA, so it never asks), nor
//   publish, lookup, spawn, connect or the rest (NULL: PMIx answers "not
//   supported", as with Slurm).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/pmix/layout.hpp"
#include "src/util/error.hpp"

namespace ddl::pmix {

// Every host's fence contributions concatenated, or why the exchange failed.
using FenceDone = std::function<void(Result<std::string> all)>;

// What the server tells its host, from PMIx's own thread: each must return at
// once (queue the work). Ranks are ranks of the whole job.
struct ServerEvents {
  // This host's contribution to a fence of the whole namespace; call `done`
  // exactly once, from any thread, with all hosts' data.
  std::function<void(std::string contribution, FenceDone done)> fence;
  std::function<void(int rank, int status, std::string message)> aborted;
  std::function<void(int rank)> connected;
  std::function<void(int rank)> finalized;
};

// Whether a PMIx server can run here; `why` (when not null) says what is
// missing: PMIx headers at build time, or the library on this host.
bool server_available(std::string* why);

// This host's PMIx server for one job. One per process: the PMIx library
// keeps a single server.
class Server {
public:
  // Makes its folder, initializes the library, registers the namespace and
  // every local rank. ExitCode::usage when the library is missing (what to
  // install is named) and for a bad layout (check_layout); ExitCode::launch
  // when the library refuses.
  static Result<std::unique_ptr<Server>> start(const JobLayout& layout, ServerEvents events);
  // Releases any fence still waiting, finalizes the library, removes the folder.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The "NAME=value" entries local rank `rank` needs besides the environment
  // it gets anyway: PMIx_server_setup_fork's and Open MPI's selection.
  Result<std::vector<std::string>> rank_env(int rank) const;
  // The server's folder (PMIX_SERVER_TMPDIR; the ranks' PMIX_TMPDIR).
  const std::string& directory() const;
  // The version the loaded library reports ("4.2.2rc2").
  std::string library_version() const;

  struct State;  // internal

private:
  explicit Server(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace ddl::pmix
