// SPDX-License-Identifier: MIT
// The preflight gate's judgement (issue 43): thresholds relative to the
// job's own median, a host fault told from a link fault.
#include "src/launch/preflight_verdict.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace ddl {

namespace {

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// The middle value, of an even count the higher (upper) or lower one.
double upper_median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}
double lower_median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

// "0.11 GB/s to 198.18.0.4 against a median of 1.9 GB/s (ring neighbour)", or the latency.
std::string pair_reason(const PairFigure& pair, std::size_t peer_index, const std::vector<std::string>& hosts,
                        const PreflightVerdict& v, double min_fraction) {
  const char* kind = pair.ring ? "ring neighbour" : "extra pair";
  const std::string& peer = hosts[peer_index];
  if (!pair.failed.empty()) {  // "H2 did not answer ..." names its host already
    return pair.silent == peer_index ? fmt::format("{} ({})", pair.failed, kind)
                                     : fmt::format("{} with {} ({})", pair.failed, peer, kind);
  }
  if (pair.gbps < min_fraction * v.median_gbps) {
    return fmt::format("{:.2g} GB/s to {} against a median of {:.2g} GB/s ({})", pair.gbps, peer, v.median_gbps,
                       kind);
  }
  return fmt::format("{:.3g} ms to {} against a median of {:.3g} ms ({})", pair.latency_ms, peer,
                     v.median_latency_ms, kind);
}

// The first pair that failed because `host` said nothing of it; null when none.
const PairFigure* silent_pair(std::size_t host, const std::vector<PairFigure>& pairs) {
  auto found = std::ranges::find(pairs, std::optional<std::size_t>(host), &PairFigure::silent);
  return found == pairs.end() ? nullptr : &*found;
}

// The worse of two slow pairs: the lower share of the median bandwidth.
bool worse(const PairFigure& x, const PairFigure& y) { return x.gbps < y.gbps; }

} // namespace

bool pair_is_slow(const PairFigure& pair, const PreflightVerdict& v, double min_fraction, double max_latency_factor) {
  return !pair.failed.empty() || pair.gbps < min_fraction * v.median_gbps ||
         pair.latency_ms > max_latency_factor * v.median_latency_ms;
}

std::vector<std::pair<std::size_t, std::size_t>> preflight_pairs(std::size_t hosts) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  if (hosts < 2) {
    return out;
  }
  std::size_t ring_pairs = hosts == 2 ? 1 : hosts;
  for (std::size_t i = 0; i < ring_pairs; ++i) {
    out.emplace_back(i, (i + 1) % hosts);
  }
  if (hosts >= 5) {
    for (std::size_t i = 0; i < hosts; ++i) {
      out.emplace_back(i, (i + 2) % hosts);
    }
  } else if (hosts == 4) {
    out.emplace_back(0, 2);
    out.emplace_back(1, 3);
  }
  return out;
}

PreflightMedians preflight_medians(std::size_t hosts, const std::vector<PairFigure>& pairs) {
  // Of each host's pairs the median, so that one slow host (2 of the 3 pairs
  // among 3 hosts, half of them among 4) cannot drag it down, while a pair
  // that happened to run alone on a loaded machine does not lift it.
  std::vector<std::vector<double>> host_gbps(hosts);
  std::vector<std::vector<double>> host_latency(hosts);
  for (const PairFigure& pair : pairs) {
    if (!pair.failed.empty()) {
      continue;
    }
    for (std::size_t end : {pair.a, pair.b}) {
      host_gbps[end].push_back(pair.gbps);
      host_latency[end].push_back(pair.latency_ms);
    }
  }
  std::vector<double> gbps;
  std::vector<double> latency;
  for (std::size_t h = 0; h < hosts; ++h) {
    if (!host_gbps[h].empty()) {
      gbps.push_back(upper_median(host_gbps[h]));
      latency.push_back(lower_median(host_latency[h]));
    }
  }
  return {median(gbps), median(latency)};
}

PreflightVerdict judge_preflight(const std::vector<std::string>& hosts, const std::vector<PairFigure>& pairs,
                                 double min_fraction, double max_latency_factor) {
  return judge_preflight(hosts, pairs, preflight_medians(hosts.size(), pairs), min_fraction, max_latency_factor);
}

PreflightVerdict judge_preflight(const std::vector<std::string>& hosts, const std::vector<PairFigure>& pairs,
                                 const PreflightMedians& medians, double min_fraction, double max_latency_factor) {
  PreflightVerdict v;
  v.median_gbps = medians.gbps;
  v.median_latency_ms = medians.latency_ms;

  std::vector<std::size_t> peers(hosts.size(), 0);
  std::vector<std::size_t> slow(hosts.size(), 0);
  std::vector<const PairFigure*> worst(hosts.size(), nullptr);
  for (const PairFigure& pair : pairs) {
    for (std::size_t end : {pair.a, pair.b}) {
      ++peers[end];
    }
    if (!pair_is_slow(pair, v, min_fraction, max_latency_factor)) {
      continue;
    }
    for (std::size_t end : {pair.a, pair.b}) {
      ++slow[end];
      if (worst[end] == nullptr || worse(pair, *worst[end])) {
        worst[end] = &pair;
      }
    }
  }
  std::vector<bool> at_fault(hosts.size(), false);
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    // A host that said nothing of a pair is at fault whatever its other
    // pairs did (stopped after a few): the pair's reason names it already.
    const PairFigure* silent = silent_pair(h, pairs);
    if (silent == nullptr && !(slow[h] >= 2 && slow[h] * 2 > peers[h])) {
      continue;
    }
    at_fault[h] = true;
    const PairFigure& named = silent != nullptr ? *silent : *worst[h];
    const std::size_t peer = named.a == h ? named.b : named.a;
    v.findings.push_back({false, h, peer,
                          silent != nullptr ? named.failed
                                            : hosts[h] + ": " + pair_reason(named, peer, hosts, v, min_fraction)});
  }
  for (const PairFigure& pair : pairs) {
    if (pair_is_slow(pair, v, min_fraction, max_latency_factor) && !at_fault[pair.a] && !at_fault[pair.b]) {
      v.findings.push_back({true, pair.a, pair.b,
                            fmt::format("link {} - {}: {}; both hosts fine with their other peers", hosts[pair.a],
                                        hosts[pair.b], pair_reason(pair, pair.b, hosts, v, min_fraction))});
    }
  }
  return v;
}

} // namespace ddl
