// SPDX-License-Identifier: MIT
// The preflight gate's judgement (issue 43): which host pairs are measured,
// and from their figures which hosts or links fall behind the job's own
// median, each with the sentence that says why. No I/O: the measurements come
// from the check worker; the thresholds from [preflight].
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddl {

// One measured pair of hosts (indexes into the host list).
struct PairFigure {
  std::size_t a = 0;
  std::size_t b = 0;
  double gbps = 0;        // bandwidth, GB/s
  double latency_ms = 0;  // round trip
  bool ring = false;      // ring neighbours (else an extra pair that places the fault)
  std::string failed;     // why the pair could not be measured ("no answer within the budget"); "" when it was
  // The end (a or b) that said nothing of the pair: `failed` names it ("H did
  // not answer the check within 5s"), and that host is at fault.
  std::optional<std::size_t> silent;
};

// The pairs to measure among n hosts: the ring's neighbours (i, i+1), then,
// from 4 hosts, (i, i+2), so that every host has 4 peers and a slow host is
// told from a slow link by how many of its peers see it slow.
std::vector<std::pair<std::size_t, std::size_t>> preflight_pairs(std::size_t hosts);

struct PreflightFinding {
  bool is_link = false;  // a link between two hosts fine with their other peers
  std::size_t host = 0;  // the host at fault, or the link's first end
  std::size_t peer = 0;  // the worst peer, or the link's other end
  std::string why;       // "198.18.0.3: 0.11 GB/s to 198.18.0.4 against a median of 1.9 GB/s (ring neighbour)"
};

struct PreflightVerdict {
  double median_gbps = 0;
  double median_latency_ms = 0;
  std::vector<PreflightFinding> findings;  // hosts first, then links
};

// Whether `pair` falls behind the verdict's medians (or was not measured).
bool pair_is_slow(const PairFigure& pair, const PreflightVerdict& verdict, double min_fraction,
                  double max_latency_factor);

// The job's medians: over hosts, of each host's median pair (of two, the
// better bandwidth and the better round trip).
struct PreflightMedians {
  double gbps = 0;
  double latency_ms = 0;
};
PreflightMedians preflight_medians(std::size_t hosts, const std::vector<PairFigure>& pairs);

// Judges the figures against `medians`: a pair is slow below min_fraction of
// the median bandwidth or above max_latency_factor times the median latency;
// a host slow with more than half of its peers (at least 2) is at fault, and
// a slow pair that no faulty host explains is a link. A second measurement
// of some pairs is judged against the first one's medians: pairs measured
// alone do not move the bar for those that were not measured again.
PreflightVerdict judge_preflight(const std::vector<std::string>& hosts, const std::vector<PairFigure>& pairs,
                                 const PreflightMedians& medians, double min_fraction, double max_latency_factor);
// The same against the figures' own medians (preflight_medians).
PreflightVerdict judge_preflight(const std::vector<std::string>& hosts, const std::vector<PairFigure>& pairs,
                                 double min_fraction, double max_latency_factor);

} // namespace ddl
