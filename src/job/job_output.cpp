// SPDX-License-Identifier: MIT
// [job]'s output keys and their options (issue 19): which ranks are shown,
// the line prefix, timestamps, split rank logs, --fold; and --stdin.
#include <cstdint>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/line_prefix.hpp"
#include "src/util/text.hpp"

namespace ddl::job_detail {

namespace {

// `text` checked as a prefix template; the problem reported at `where`.
void check_prefix(const std::string& text, Position where, std::string_view name, Diagnostics& diag) {
  std::string problem;
  if (!LinePrefix::parse(text, problem)) {
    diag.at(where, fmt::format("{}: {}", name, problem));
  }
}

void set_output_ranks(const std::string& text, Position where, std::string_view name, JobSpec& job,
                      Diagnostics& diag) {
  std::string problem;
  if (auto ranks = parse_rank_list(text, problem)) {
    job.output_ranks = std::move(*ranks);
  } else {
    diag.at(where, fmt::format("{}: {}", name, problem));
  }
}

// --stdin R|all|none (the rank is checked against the plan later).
void set_stdin_ranks(const std::string& text, JobSpec& job, Diagnostics& diag) {
  if (text == "all") {
    job.stdin_ranks = {StdinRanks::Kind::all, 0};
  } else if (text == "none") {
    job.stdin_ranks = {StdinRanks::Kind::none, 0};
  } else if (auto rank = parse_int(text); rank && *rank >= 0 && *rank <= INT32_MAX) {
    job.stdin_ranks = {StdinRanks::Kind::one, static_cast<int>(*rank)};
  } else {
    diag.at(Position{}, fmt::format("--stdin: expected a rank, all or none, not '{}'", text));
  }
}

} // namespace

void read_output_keys(const Section& s, JobSpec& job, SourcePlaces& places) {
  std::string ranks;
  if (s.read_string("output_ranks", ranks)) {
    set_output_ranks(ranks, position_of(s.node("output_ranks")->source()), "job.output_ranks", job, s.diag());
  }
  if (s.read_string("prefix", job.prefix)) {
    check_prefix(job.prefix, position_of(s.node("prefix")->source()), "job.prefix", s.diag());
  }
  s.read_bool("timestamps", job.timestamps);
  if (s.read_bool("split_logs", job.split_logs)) {
    places.split_logs = position_of(s.node("split_logs")->source());
  }
  if (s.read_bool("fold", job.fold)) {
    places.fold = position_of(s.node("fold")->source());
  }
}

void apply_output_overrides(const Overrides& o, JobSpec& job, const SourcePlaces& places, Diagnostics& diag) {
  if (o.output_ranks) {
    set_output_ranks(*o.output_ranks, Position{}, "--output-ranks", job, diag);
  }
  if (o.stdin_ranks) {
    set_stdin_ranks(*o.stdin_ranks, job, diag);
  }
  if (o.prefix) {
    job.prefix = *o.prefix;
    check_prefix(job.prefix, Position{}, "--prefix", diag);
  }
  job.timestamps = job.timestamps || o.timestamps;
  job.split_logs = job.split_logs || o.split_logs;
  job.fold = job.fold || o.fold;
  // The rules between keys: at the key's place in the file, else as an option.
  if (job.split_logs && job.log_dir.empty()) {
    diag.at(o.split_logs ? Position{} : places.split_logs,
            fmt::format("{}: needs a log directory (job.log_dir or --log-dir)",
                        o.split_logs ? "--split-logs" : "job.split_logs"));
  }
  if (job.fold && job.timestamps) {
    diag.at(o.fold ? Position{} : places.fold,
            fmt::format("{}: does not go with timestamps (no two lines would be the same)",
                        o.fold ? "--fold" : "job.fold"));
  }
}

} // namespace ddl::job_detail
