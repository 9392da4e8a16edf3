// SPDX-License-Identifier: MIT
// `ddl rsh HOST COMMAND...` below its command line: Open MPI's plm_rsh_agent
// for the mpirun backend. It runs COMMAND on HOST under the shim, through the
// job's own transport: libssh with [ssh] (DDL_RSH_TRANSPORT=ssh) or kubectl
// exec into the pod with [kubernetes] (=kubernetes). The job file comes from
// DDL_RSH_JOB, the ssh config (-F or [ssh] config, as the launcher read it)
// from DDL_RSH_SSH_CONFIG. The command's output goes to ours as it comes;
// SIGTERM, SIGINT or SIGHUP end it.
#pragma once

#include <string>
#include <vector>

#include "src/util/error.hpp"

namespace ddl::session {

// How the remote command ended: its exit code, or why it could not start.
struct RshEnd {
  int code = 0;
  std::string launch_error;  // "" when it started
};

Result<RshEnd> run_rsh_agent(const std::string& host_name, const std::vector<std::string>& command);

} // namespace ddl::session
