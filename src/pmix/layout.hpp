// SPDX-License-Identifier: MIT
// Where the ranks of one PMIx namespace run, and the keys that tell each rank
// (see server.hpp for which keys Open MPI reads, and why these).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"

namespace ddl::pmix {

// One host of the job: its name (each rank's PMIX_HOSTNAME, an entry of the
// node map, and the name this host's PMIx server goes by) and how many ranks
// it runs. Ranks fill hosts in order: host 0 holds ranks 0..n0-1, and so on.
struct HostShare {
  std::string name;
  int ranks = 0;
};

struct JobLayout {
  std::string nspace;            // the same on every host of the job
  std::vector<HostShare> hosts;  // every host of the job, in rank order
  int this_host = 0;             // which of them this server serves

  int world_size() const;
  int first_rank(int host) const;
  int local_ranks() const { return hosts.at(static_cast<std::size_t>(this_host)).ranks; }
  int first_local_rank() const { return first_rank(this_host); }
  // The host that runs `rank` (0 <= rank < world_size()).
  int host_of(int rank) const;
};

// The job's PMIx namespace, the same on every host: "ddl-JOB-ATTEMPT".
std::string job_namespace(std::string_view job, std::string_view attempt);

// Hosts that go by the same name (two plan hosts on one machine, pods that
// share a hostname) renamed "NAME-ddlI", I the host's index in the job, so
// that each host's server, node-map entry and folder is its own. Names that
// are already unique stay as they are.
void make_host_names_unique(std::vector<HostShare>& hosts);

// Whether the layout can be registered: a namespace of 1 to 255 characters,
// at least one host, each with at least one rank and a distinct name without
// ',' ';' or blanks (the node map is a comma list), this_host among them.
// Errors are ExitCode::usage and name the culprit.
Result<void> check_layout(const JobLayout& layout);

// A key as PMIx will get it, built without the PMIx headers. `regex` values
// are the plain list that PMIx_generate_regex / PMIx_generate_ppn compress.
enum class ValueType { string, uint32, uint16, rank, boolean, regex_nodes, regex_procs };
struct KeyValue {
  std::string key;
  ValueType type = ValueType::string;
  std::string text;          // string and regex values
  std::uint32_t number = 0;  // numbers; booleans as 0 or 1
};

// Where the ranks may keep session files (PMIX_TMPDIR, PMIX_NSDIR): folders of
// this host's server, unique per host even where hosts share a filesystem.
struct SessionDirs {
  std::string tmpdir;
  std::string nsdir;
};

// The keys of the namespace as this host registers them: job-level keys
// (sizes, node and process maps, this host's local peers, session folders),
// then one array per rank of the whole job (rank, local and node rank,
// hostname, node id, app number), as Slurm's mpi/pmix plugin does.
struct NamespaceKeys {
  std::vector<KeyValue> job;
  std::vector<std::vector<KeyValue>> ranks;  // indexed by rank
};
NamespaceKeys namespace_keys(const JobLayout& layout, const SessionDirs& dirs);

// ddl's own variables for `rank` of the job, as `ddl run` gives any rank
// ("DDL_RANK=5", DDL_WORLD_SIZE, DDL_LOCAL_RANK, DDL_LOCAL_SIZE,
// DDL_NODE_RANK): under `ddl run --mpi pmix` the ranks ddl supervises are
// the hosts, so each MPI rank gets its own values here.
std::vector<std::string> rank_identity_env(const JobLayout& layout, int rank);

} // namespace ddl::pmix
