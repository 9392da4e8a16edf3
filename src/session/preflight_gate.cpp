// SPDX-License-Identifier: MIT
#include "src/session/preflight_gate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fcntl.h>
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/collectives/preflight_worker.hpp"
#include "src/session/job_run.hpp"
#include "src/session/planned_job.hpp"
#include "src/util/duration.hpp"
#include "src/util/net.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl::session {

namespace {

// The workers' bound on top of their budget (a host too slow to start its
// worker within it is a finding); connecting to the hosts before is bounded
// by the backend's own timeouts.
constexpr Millis k_worker_allowance{1'000};

// A slow pair's second chance: measured this many times more, one pair at
// a time, its best try counting. On this machine's test hosts (veth, 2
// cores shared by every host) a pair's bandwidth among others running at
// once varies up to four times with how many share the CPU, while a
// rate-limited link stays hundreds of times behind when measured alone.
constexpr int k_suspect_tries = 2;
// Healthy pairs measured again beside the slow ones, as the yardstick.
constexpr std::size_t k_reference_pairs = 3;

// Each direction's stream: a fortieth of the budget, within 10 to 50 ms.
Millis stream_window(Millis budget) { return std::clamp(Millis{budget.count() / 40}, Millis{10}, Millis{50}); }

// The job as the check launches it: one worker per host, nothing of the
// job's own program, output rules, container, watchdog or restarts.
JobSpec check_job(const JobSpec& job, std::size_t hosts) {
  JobSpec check = job;
  check.launch.np = NpRange{static_cast<int>(hosts), std::nullopt};
  check.hosts.slots_each = 1;
  check.hosts.max_hosts.reset();
  check.hosts.include.clear();
  check.hosts.exclude.clear();
  check.placement = {};
  check.container = {};
  check.watchdog = {};
  check.max_restarts = 0;
  check.grace = Millis{1'000};  // a worker stopped at the budget goes at once
  check.log_dir.clear();
  check.strict_logs = false;
  check.output_ranks = {};
  check.fold = false;
  check.stdin_ranks = {StdinRanks::Kind::none, 0};
  check.preflight.enabled = false;
  return check;
}

// What one check launch left: each rank's host and its figures' text (""
// when it published none).
struct Measured {
  std::vector<std::string> rank_hosts;
  std::vector<std::optional<std::string>> figures;
};

// One launch of the check on the job's own backend: its connections (ssh)
// are kept there for the next launch, the job's.
Result<Measured> measure(const JobSpec& job, const std::shared_ptr<Backend>& backend, const Inventory& hosts,
                         const std::vector<coll::PreflightPair>& pairs, Millis budget, bool sequential) {
  const JobSpec check = check_job(job, hosts.size());
  Measured measured;
  measured.rank_hosts.resize(hosts.size());
  measured.figures.resize(hosts.size());
  RunAsk ask;
  ask.live = false;
  ask.worker_timeout = budget + k_worker_allowance;
  // The workers print nothing of their own; the gang's messages about them
  // (a worker stopped at the budget) are the findings' business, shown at -vv.
  net::Fd quiet(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  if (!spdlog::should_log(spdlog::level::debug) && quiet) {
    ask.output_fd = quiet.get();
  }
  ask.select = [&hosts, &backend](const JobSpec&) -> Result<SelectedBackend> {
    return SelectedBackend{backend, hosts, ""};
  };
  const Millis window = stream_window(job.preflight.budget);
  ask.worker = [&pairs, budget, window, sequential](const Backend& launching) {
    std::vector<std::string> command{launching.ddl_path(), "worker", "preflight", "--pairs",
                                     coll::format_preflight_pairs(pairs), "--window-ms",
                                     std::to_string(window.count()), "--budget-ms",
                                     std::to_string(budget.count())};
    if (sequential) {
      command.emplace_back("--sequential");
    }
    return command;
  };
  ask.on_planned = [&measured](const Plan& plan) {
    for (const RankSlot& slot : plan.ranks) {
      if (static_cast<std::size_t>(slot.rank) < measured.rank_hosts.size()) {
        measured.rank_hosts[static_cast<std::size_t>(slot.rank)] = plan.hosts[slot.host_index].name;
      }
    }
  };
  ask.after_ranks = [&measured](rendezvous::Server& server) {
    for (std::size_t rank = 0; rank < measured.figures.size(); ++rank) {
      measured.figures[rank] = server.value(std::string(coll::k_preflight_figures_key) + std::to_string(rank));
    }
  };
  auto code = JobRun(check, std::move(ask)).run();
  if (!code) {
    return fail(code.error());
  }
  return measured;
}

// The lines of `rank`'s figures about `pair` (one per try); nullopt when
// it published none at all.
std::optional<std::vector<coll::PreflightLine>> lines_of(const Measured& measured, int rank,
                                                         const coll::PreflightPair& pair) {
  const auto& text = measured.figures[static_cast<std::size_t>(rank)];
  if (!text) {
    return std::nullopt;
  }
  std::vector<coll::PreflightLine> lines;
  for (const std::string& row : split(*text, '\n')) {
    auto line = coll::parse_preflight_line(row);
    if (line && line->pair == pair) {
      lines.push_back(std::move(*line));
    }
  }
  return lines;
}

// One pair's figure (`pair`: its check ranks; `hosts`: its host indexes)
// from both ends' lines: the round trip the dialer saw, the slower
// direction's bandwidth; of several tries, the best.
PairFigure pair_figure(const Measured& measured, const coll::PreflightPair& pair,
                       std::pair<std::size_t, std::size_t> hosts, Millis budget) {
  PairFigure figure;
  figure.a = hosts.first;
  figure.b = hosts.second;
  auto dialer = lines_of(measured, pair.a, pair);
  auto acceptor = lines_of(measured, pair.b, pair);
  // An end that said nothing of this pair (of any pair, or it was stopped before this one).
  const bool dialer_silent = !dialer || dialer->empty();
  if (dialer_silent || !acceptor || acceptor->empty()) {
    const int silent = dialer_silent ? pair.a : pair.b;
    figure.silent = dialer_silent ? figure.a : figure.b;
    figure.failed = fmt::format("{} did not answer the check within {}",
                                measured.rank_hosts[static_cast<std::size_t>(silent)], format_duration(budget));
    return figure;
  }
  bool measured_once = false;
  for (std::size_t i = 0; i < dialer->size() && i < acceptor->size(); ++i) {
    const coll::PreflightLine& out = (*dialer)[i];
    const coll::PreflightLine& back = (*acceptor)[i];
    if (out.failed || back.failed) {
      figure.failed = out.failed ? out.why : back.why;
      continue;
    }
    const double gbps = std::min(out.received_gbps, back.received_gbps);
    figure.gbps = measured_once ? std::max(figure.gbps, gbps) : gbps;
    figure.latency_ms = measured_once ? std::min(figure.latency_ms, out.latency_ms) : out.latency_ms;
    measured_once = true;
  }
  if (measured_once) {
    figure.failed.clear();
  } else if (figure.failed.empty()) {
    figure.failed = "no figure from the check";
  }
  return figure;
}

// Measures `pairs` (indexes into outcome.hosts) among their hosts in one launch.
// How a launch of the check measures its pairs: each `tries` times (the
// tries of all pairs interleaved), all at once or one at a time.
struct MeasureWay {
  int tries = 1;
  bool sequential = false;
  Millis budget;
};

Result<std::vector<PairFigure>> measure_pairs(const JobSpec& job, const std::shared_ptr<Backend>& backend,
                                              const Inventory& all,
                                              const std::vector<std::pair<std::size_t, std::size_t>>& pairs,
                                              const MeasureWay& way) {
  // The check's ranks: the hosts the pairs name, in the job's order.
  std::vector<std::size_t> used;
  for (const auto& [a, b] : pairs) {
    used.push_back(a);
    used.push_back(b);
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  Inventory hosts;
  for (std::size_t index : used) {
    hosts.push_back(all[index]);
  }
  auto rank_of = [&used](std::size_t index) {
    return static_cast<int>(std::find(used.begin(), used.end(), index) - used.begin());
  };
  std::vector<coll::PreflightPair> rank_pairs;
  for (const auto& [a, b] : pairs) {
    rank_pairs.push_back({rank_of(a), rank_of(b)});
  }
  std::vector<coll::PreflightPair> in_order;
  for (int t = 0; t < way.tries; ++t) {
    in_order.insert(in_order.end(), rank_pairs.begin(), rank_pairs.end());
  }
  auto measured = measure(job, backend, hosts, in_order, way.budget, way.sequential);
  if (!measured) {
    return fail(measured.error());
  }
  std::vector<PairFigure> figures;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    figures.push_back(pair_figure(*measured, rank_pairs[i], pairs[i], way.budget));
  }
  return figures;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A slow pair is measured again, one at a time, beside up to
// k_reference_pairs healthy ones measured the same way; its best try,
// scaled by how the healthy ones moved between the two, counts: a fault
// stays slow, a pair that lost the CPU to the others (or to the machine's
// other work) does not. Which pairs: the slow ones first, then the yardsticks.
std::vector<std::size_t> pairs_to_measure_again(const PreflightOutcome& outcome, const PreflightSection& rules,
                                                std::size_t& suspects) {
  std::vector<std::size_t> again;
  for (std::size_t i = 0; i < outcome.pairs.size(); ++i) {
    const PairFigure& pair = outcome.pairs[i];
    if (pair.failed.empty() && pair_is_slow(pair, outcome.verdict, rules.min_fraction, rules.max_latency_factor)) {
      again.push_back(i);
    }
  }
  suspects = again.size();
  for (std::size_t i = 0; suspects > 0 && i < outcome.pairs.size() && again.size() < suspects + k_reference_pairs;
       ++i) {
    if (outcome.pairs[i].failed.empty() && std::ranges::find(again, i) == again.end()) {
      again.push_back(i);
    }
  }
  return again;
}

// How much faster the first launch measured the yardstick pairs (at least 1).
double yardstick_scale(const PreflightOutcome& outcome, const std::vector<std::size_t>& again_index,
                       const std::vector<PairFigure>& again, std::size_t suspects) {
  std::vector<double> moved;
  for (std::size_t k = suspects; k < again_index.size(); ++k) {
    if (again[k].failed.empty() && again[k].gbps > 0) {
      moved.push_back(outcome.pairs[again_index[k]].gbps / again[k].gbps);
    }
  }
  std::sort(moved.begin(), moved.end());
  return moved.empty() ? 1.0 : std::max(1.0, moved[moved.size() / 2]);
}

Result<void> measure_slow_pairs_again(const JobSpec& job, const std::shared_ptr<Backend>& backend,
                                      const Inventory& hosts, PreflightOutcome& outcome,
                                      std::chrono::steady_clock::time_point start) {
  const PreflightSection& rules = job.preflight;
  std::size_t suspects = 0;
  const std::vector<std::size_t> again_index = pairs_to_measure_again(outcome, rules, suspects);
  if (suspects == 0) {
    return {};
  }
  std::vector<std::pair<std::size_t, std::size_t>> again_pairs;
  for (std::size_t i : again_index) {
    again_pairs.emplace_back(outcome.pairs[i].a, outcome.pairs[i].b);
  }
  // Within what is left of the budget (at least a second).
  const auto spent = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
  auto again = measure_pairs(job, backend, hosts, again_pairs,
                             MeasureWay{k_suspect_tries, true, std::max(rules.budget - spent, Millis{1'000})});
  if (!again) {
    return fail(again.error());
  }
  if (stop::requested()) {
    return fail(stop::error("checking the network"));
  }
  const double scale = yardstick_scale(outcome, again_index, *again, suspects);
  for (std::size_t k = 0; k < suspects; ++k) {
    PairFigure& pair = outcome.pairs[again_index[k]];
    const PairFigure& second = (*again)[k];
    spdlog::debug("preflight: {} - {} again: {} (healthy pairs {:.2f} times slower)", outcome.hosts[pair.a],
                  outcome.hosts[pair.b],
                  second.failed.empty() ? fmt::format("{:.3g} GB/s, {:.3g} ms", second.gbps, second.latency_ms)
                                        : second.failed,
                  scale);
    if (second.failed.empty()) {
      pair.gbps = std::max(pair.gbps, second.gbps * scale);
      pair.latency_ms = std::min(pair.latency_ms, second.latency_ms);
    }
  }
  outcome.remeasured = static_cast<int>(suspects);
  // Against the first measurement's medians: the pairs measured again, now
  // faster, must not raise the bar for those that were not.
  const PreflightMedians first{outcome.verdict.median_gbps, outcome.verdict.median_latency_ms};
  outcome.verdict = judge_preflight(outcome.hosts, outcome.pairs, first, rules.min_fraction, rules.max_latency_factor);
  return {};
}

} // namespace

Result<PreflightOutcome> check_network(const JobSpec& job, const std::shared_ptr<Backend>& backend,
                                       const Inventory& hosts) {
  const auto start = std::chrono::steady_clock::now();
  const PreflightSection& rules = job.preflight;
  PreflightOutcome outcome;
  for (const Host& host : hosts) {
    outcome.hosts.push_back(host.name);
  }
  const auto pairs = preflight_pairs(hosts.size());
  backend->expect_another_launch();
  auto figures = measure_pairs(job, backend, hosts, pairs, MeasureWay{1, false, rules.budget});
  if (!figures) {
    return fail(figures.error());
  }
  if (stop::requested()) {  // the workers were stopped: their figures say nothing of the hosts
    return fail(stop::error("checking the network"));
  }
  const std::size_t ring_pairs = hosts.size() == 2 ? 1 : hosts.size();
  for (std::size_t i = 0; i < figures->size(); ++i) {
    (*figures)[i].ring = i < ring_pairs;
  }
  outcome.pairs = std::move(*figures);
  outcome.verdict = judge_preflight(outcome.hosts, outcome.pairs, rules.min_fraction, rules.max_latency_factor);
  if (auto again = measure_slow_pairs_again(job, backend, hosts, outcome, start); !again) {
    return fail(again.error());
  }
  outcome.seconds = seconds_since(start);
  return outcome;
}

std::vector<LeftOutHost> preflight_left_out(const PreflightOutcome& outcome) {
  std::vector<LeftOutHost> out;
  auto has = [&out](const std::string& name) {
    return std::ranges::any_of(out, [&name](const LeftOutHost& host) { return host.name == name; });
  };
  for (const PreflightFinding& finding : outcome.verdict.findings) {
    if (!finding.is_link && !has(outcome.hosts[finding.host])) {
      out.push_back({outcome.hosts[finding.host], finding.why});
    }
  }
  for (const PreflightFinding& finding : outcome.verdict.findings) {
    const std::string& later = outcome.hosts[std::max(finding.host, finding.peer)];
    if (finding.is_link && !has(outcome.hosts[finding.host]) && !has(outcome.hosts[finding.peer])) {
      out.push_back({later, finding.why});
    }
  }
  return out;
}

std::string_view preflight_action(const PreflightOutcome& outcome, PreflightOnFail on_fail) {
  if (outcome.verdict.findings.empty()) {
    return "passed";
  }
  switch (on_fail) {
  case PreflightOnFail::exclude: return "excluded";
  case PreflightOnFail::stop: return "stopped";
  case PreflightOnFail::warn: return "warned";
  }
  return "warned";
}

std::string preflight_stop_message(const PreflightOutcome& outcome) {
  std::string why;
  for (const PreflightFinding& finding : outcome.verdict.findings) {
    why += (why.empty() ? "" : "; ") + finding.why;
  }
  return fmt::format("preflight: {} ([preflight] on_fail = \"stop\")", why);
}

std::string preflight_summary(const PreflightOutcome& outcome) {
  const PreflightVerdict& v = outcome.verdict;
  std::size_t hosts = 0;
  std::size_t links = 0;
  for (const PreflightFinding& finding : v.findings) {
    ++(finding.is_link ? links : hosts);
  }
  std::string found = v.findings.empty() ? "no host or link behind"
                                         : fmt::format("{} host{} and {} link{} behind", hosts, hosts == 1 ? "" : "s",
                                                       links, links == 1 ? "" : "s");
  return fmt::format("preflight: {} hosts, {} pairs in {:.1f} s: median {:.3g} GB/s, {:.3g} ms round trip; {}",
                     outcome.hosts.size(), outcome.pairs.size(), outcome.seconds, v.median_gbps,
                     v.median_latency_ms, found);
}

// DESIGN.md's names (hosts, links with from, to, gbps and latency_us,
// excluded with host and why), then the judgement.
Json preflight_event(const PreflightOutcome& outcome, std::string_view action) {
  Json links = Json::array();
  for (const PairFigure& pair : outcome.pairs) {
    Json link{{"from", outcome.hosts[pair.a]}, {"to", outcome.hosts[pair.b]}};
    if (pair.failed.empty()) {
      link.update({{"gbps", pair.gbps}, {"latency_us", pair.latency_ms * 1000}});
    } else {
      link.update({{"gbps", nullptr}, {"latency_us", nullptr}, {"failed", pair.failed}});
    }
    link["ring"] = pair.ring;
    links.push_back(std::move(link));
  }
  Json excluded = Json::array();
  if (action == "excluded") {
    for (const LeftOutHost& host : preflight_left_out(outcome)) {
      excluded.push_back(Json{{"host", host.name}, {"why", host.why}});
    }
  }
  Json findings = Json::array();
  for (const PreflightFinding& finding : outcome.verdict.findings) {
    findings.push_back(Json{{"kind", finding.is_link ? "link" : "host"},
                            {"host", outcome.hosts[finding.host]},
                            {"peer", outcome.hosts[finding.peer]},
                            {"why", finding.why}});
  }
  return Json{{"event", "preflight"},
              {"time", event_time_now()},
              {"hosts", outcome.hosts},
              {"links", std::move(links)},
              {"excluded", std::move(excluded)},
              {"median_gbps", outcome.verdict.median_gbps},
              {"median_latency_us", outcome.verdict.median_latency_ms * 1000},
              {"findings", std::move(findings)},
              {"remeasured", outcome.remeasured},
              {"seconds", std::round(outcome.seconds * 1000) / 1000},
              {"action", action}};
}

} // namespace ddl::session
