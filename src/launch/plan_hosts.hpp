// SPDX-License-Identifier: MIT
#pragma once

// The one host pipeline. Every user of a job's hosts (run, bench, render,
// hosts, sweep and the elastic re-plan) gets them here, in these steps:
//   1. found: the backend's own hosts (Kubernetes pods), else the job's
//      host source (run again each time: a re-plan re-reads the source);
//   2. --include / --exclude, where the slots are known already;
//   3. each address as the backend reaches it (ssh -G's HostName);
//   4. loopback addresses made routable when some host is remote;
//   5. slots = "gpus": each host's GPUs probed through the backend, then
//      --include / --exclude on them (the slot ids are the GPUs);
//   6. else, with [launch] bind_gpus, hosts of this machine whose GPUs are
//      unknown counted here: one without GPUs gets none bound
//      (Host::gpus_probed; remote hosts are counted by the launch).

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/launch/backend.hpp"

namespace ddl {

// Step 1 alone: the hosts as found, nothing filtered or probed yet.
Result<Inventory> found_hosts(const JobSpec& job, Backend& backend);

// Where the pipeline stops: every step, or before the GPU probes, 5 and 6
// (`ddl hosts --check`, which counts each host's GPUs itself; --include /
// --exclude on GPU slots are then not applied).
enum class HostSteps { all, before_probe };

// Steps 2 to 6 on `found` (what found_hosts or select_backend found).
Result<Inventory> hosts_for_plan(const JobSpec& job, Backend& backend, Inventory found,
                                 HostSteps steps = HostSteps::all);

// Every step: the hosts found again and made ready for a plan.
Result<Inventory> hosts_for_plan(const JobSpec& job, Backend& backend);

// Hosts that the launcher reaches at a loopback address are this machine
// (a name that Debian maps to 127.0.1.1, "localhost"): when some host is
// remote, they get the address this machine has toward the first remote one,
// which remote ranks can reach (MASTER_ADDR, TF_CONFIG, hostfiles). Step 4.
// Every address is looked up at once under net::k_resolve_deadline; in a
// launch, addresses that do not resolve are an error (ExitCode::launch)
// naming each host; render and --dry-run (net::NameLookup::no_dns) never
// ask DNS and keep such a host by name.
Result<Inventory> routable_addresses(Inventory hosts, bool ranks_are_local);

} // namespace ddl
