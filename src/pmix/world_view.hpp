// SPDX-License-Identifier: MIT
#pragma once

// What `ddl run --mpi pmix --dry-run` shows of the MPI world that the hosts'
// PMIx servers will build: each rank's host and keys, the keys every rank
// sees and those of each host's ranks, all from namespace_keys (layout.hpp),
// so the preview and the registered namespace never differ.

#include <string>
#include <vector>

#include "src/pmix/layout.hpp"
#include "src/util/json.hpp"

namespace ddl::pmix {

// `layout` with its hosts' PMIx names (this_host unused); `plan_hosts` the
// same hosts by their names in the plan. The session folders, made at run
// time, show as "<TMPDIR>/ddl-pmix.NAME.XXXXXX".
struct WorldView {
  JobLayout layout;
  std::vector<std::string> plan_hosts;
};

// "MPI world (--mpi pmix): ..." then a table of RANK, HOST, PMIX HOST and the
// rank's own keys, then the keys every rank sees and each host's keys.
std::string world_text(const WorldView& world);
// {"namespace", "world_size", "keys": {every rank's}, "hosts": [{"host",
// "pmix_host", "ranks": [..], "keys": {..}}], "ranks": [{"rank", "host",
// "keys": {..}, "env": {DDL_RANK and friends}}]}; numbers as numbers, flags
// as booleans.
Json world_json(const WorldView& world);

} // namespace ddl::pmix
