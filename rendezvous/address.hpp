// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "src/util/error.hpp"
#include "src/job/job.hpp"
#include "src/plan/plan.hpp"

namespace ddl::rendezvous {

// Where the rendezvous listens, and the address every worker dials.
struct RendezvousAddress {
  std::string bind;
  std::string advertise;
};

// From [rendezvous] address. "auto": 127.0.0.1 when every host of the plan
// is this machine (always when `ranks_are_local`: the backend runs every rank
// here, whatever the host names say); else the local address whose route
// reaches the plan's first remote host (found with a UDP connect, which sends
// nothing). A wildcard (0.0.0.0, ::) listens on every interface but is
// advertised as "auto" would be: workers cannot dial a wildcard. An explicit
// loopback address while some host is remote is an error (ExitCode::usage):
// workers there could never reach it.
Result<RendezvousAddress> rendezvous_address(const JobSpec& job, const Plan& plan,
                                             bool ranks_are_local);
// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& address);

} // namespace ddl::rendezvous
