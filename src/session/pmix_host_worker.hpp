// SPDX-License-Identifier: MIT
// `ddl worker pmix-host` below its command line: this host's PMIx server and
// ranks (src/pmix/host.hpp). Alone it runs a job of one host. Started as the
// ranks of `ddl run` (one per host), each joins the job rendezvous as that
// rank: the hosts' names and rank counts, then every PMIx fence, go through
// its allgather.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/util/error.hpp"
#include "src/util/rank_tag.hpp"

namespace ddl::rendezvous {
class Client;
} // namespace ddl::rendezvous

namespace ddl::session {

struct PmixHostFlags {
  int ranks = 1;
  std::string host_ranks;  // "2,2,3": each host's --ranks, picked by DDL_RANK (ddl run --mpi pmix)
  bool rank_prefix = false;
  int lines = rank_tag::k_version;  // the version of the lines ddl reads back (rank_tag)
  std::string grace = "10s";
  std::string fence_timeout = "8760h";
};

// How the host's ranks ended: the worker's exit code, and the verdict line
// ("ddl: error: rank R ...") to print on stderr, "" when there is none (a
// success, or a stop that ddl sent: ddl's to report).
struct PmixHostEnd {
  int code = 0;
  std::string verdict;
  // The job rendezvous, held until the verdict is printed (null when alone).
  std::shared_ptr<rendezvous::Client> rendezvous;
};

// Runs `argv` as this host's ranks under the host's PMIx server.
Result<PmixHostEnd> run_pmix_host_worker(const PmixHostFlags& flags, const std::vector<std::string>& argv);

} // namespace ddl::session
