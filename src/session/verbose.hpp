// SPDX-License-Identifier: MIT
#pragma once

// What -v and -vv show while a job is planned and launched (the log levels
// info and debug): the hosts with their sources, addresses and logins, the
// backend and why, each host's interface, the ports, and each rank's command
// (-vv: and environment, the token redacted).

#include <vector>

#include "src/session/planned_job.hpp"
#include "src/render/launches.hpp"

namespace ddl::session {

void log_plan_hosts(const PlannedJob& planned);
void log_interfaces(const Plan& plan, const std::vector<HostInterface>& interfaces);
void log_ports(const LaunchContext& ctx);
void log_rank_launches(const std::vector<RankLaunch>& launches, const std::vector<std::string>& secrets);

} // namespace ddl::session
