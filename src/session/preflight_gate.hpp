// SPDX-License-Identifier: MIT
#pragma once

// The preflight gate (issue 43): before the job's ranks start, one `ddl
// worker preflight` per host, through the job's own backend, measures the
// round trip and bandwidth of the ring's neighbours and of the pairs that
// place a fault (preflight_pairs); judge_preflight finds the hosts and links
// behind the job's own median. A pair that looks slow is measured once more,
// alone, before it counts: on a loaded machine one pair may lose the CPU.

#include <memory>
#include <string>
#include <vector>

#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"
#include "src/launch/backend.hpp"
#include "src/launch/preflight_verdict.hpp"
#include "src/plan/placement.hpp"
#include "src/util/json.hpp"

namespace ddl::session {

struct PreflightOutcome {
  std::vector<std::string> hosts;  // the hosts checked, in the order of the figures' indexes
  std::vector<PairFigure> pairs;   // as judged (a slow pair's second measurement where it was taken)
  PreflightVerdict verdict;
  int remeasured = 0;              // pairs measured a second time
  double seconds = 0;              // the whole check, launches included
};

// Checks the network among `hosts` (two or more) on the job's `backend` (its
// connections are kept there for the job's launch) with the job's
// [preflight] thresholds. An error is ddl's own (the check could not be
// launched); hosts that do not answer are findings.
Result<PreflightOutcome> check_network(const JobSpec& job, const std::shared_ptr<Backend>& backend,
                                       const Inventory& hosts);

// The hosts to leave out for the findings, each with its finding: each
// faulty host, and of a slow link its later end (either end mends the link;
// the later keeps rank 0).
std::vector<LeftOutHost> preflight_left_out(const PreflightOutcome& outcome);

// What the gate does with the outcome, as the event says it: passed,
// excluded, stopped or warned.
std::string_view preflight_action(const PreflightOutcome& outcome, PreflightOnFail on_fail);

// on_fail = "stop": every finding and the rule, for ddl's error.
std::string preflight_stop_message(const PreflightOutcome& outcome);

// "preflight: 4 hosts, 6 pairs in 0.8 s: median 1.9 GB/s, 0.09 ms round trip; no host or link behind"
std::string preflight_summary(const PreflightOutcome& outcome);

// The `preflight` JSON event: every pair measured (links: from, to, gbps,
// latency_us), the hosts excluded and why, the medians, the findings and
// `action` (passed, excluded, stopped, warned; `ddl hosts --check --bench`:
// passed or found).
Json preflight_event(const PreflightOutcome& outcome, std::string_view action);

} // namespace ddl::session
