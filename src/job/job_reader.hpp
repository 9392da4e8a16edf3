// SPDX-License-Identifier: MIT
// Internal to the job-file loader: error collection and typed key readers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "src/job/job.hpp"
#include "src/util/text.hpp"

namespace ddl::job_detail {

// A place in the job file; line 0 means "no place" (a command-line option).
struct Position {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

Position position_of(const toml::source_region& region);

// Where `text` first nests deeper than `max_depth` (tables, arrays, inline
// tables and dotted-key parts together), if it does.
std::optional<Position> too_deeply_nested(std::string_view text, int max_depth);

// Collects every problem so that all are reported at once.
class Diagnostics {
 public:
  explicit Diagnostics(std::string origin) : origin_(std::move(origin)) {}
  void at(Position where, std::string message);
  void at(const toml::node& node, std::string message) { at(position_of(node.source()), std::move(message)); }
  // A problem with a command-line option: printed without a file position.
  void option(std::string message) { at(Position{}, std::move(message)); }
  bool empty() const { return entries_.empty(); }
  // One line per problem: file problems by position, then option problems.
  std::string text() const;

 private:
  struct Entry {
    Position where;
    std::size_t order = 0;
    std::string message;
  };
  std::string origin_;
  std::vector<Entry> entries_;
};

// "a string", "an integer", ... for "expected X, got Y".
std::string_view type_phrase(toml::node_type type);

// The keys of one [section]: reports unknown keys on construction, then reads
// typed values. A reader leaves `out` alone and returns false when the key is
// absent or wrong (the problem is recorded).
class Section {
 public:
  Section(const toml::table* table, std::string name, Diagnostics& diag);

  const toml::node* node(std::string_view key) const;
  std::string label(std::string_view key) const { return name_ + "." + std::string(key); }
  Diagnostics& diag() const { return diag_; }
  void wrong_type(std::string_view key, const toml::node& node, std::string_view expected) const;

  // The array at `key`; nullptr when absent, or not an array (reported as
  // not being `expected`).
  const toml::array* read_array(std::string_view key, std::string_view expected) const;
  bool read_string(std::string_view key, std::string& out) const;
  bool read_bool(std::string_view key, bool& out) const;
  bool read_int(std::string_view key, int& out, long long min, long long max) const;
  bool read_duration(std::string_view key, Millis& out, bool allow_zero) const;

 private:
  const toml::table* table_;
  std::string name_;
  Diagnostics& diag_;
};

// The sections in reading order, and the keys each accepts (from the table
// of section readers, job_sections.cpp), for unknown-key hints.
const std::vector<std::string>& section_names();
const std::vector<std::string>& section_keys(std::string_view section);

// "must be at least 1", "must be between 1 and 65535", "must be 0 or 1".
std::string range_message(long long min, long long max);
std::string duration_problem(std::string_view text);
// "'x' is not one of a, b, c; did you mean 'y'?"
std::string choice_problem(std::string_view value, const std::vector<std::string>& choices);

// `key`'s text as one of `names` into `out` (an enum in the order of
// `names`): true when read; else false, the problem reported at `key`.
template <typename Enum>
bool read_choice(const Section& s, std::string_view key, const std::vector<std::string>& names, Enum& out) {
  std::string text;
  if (!s.read_string(key, text)) {
    return false;
  }
  auto found = std::find(names.begin(), names.end(), text);
  if (found == names.end()) {
    s.diag().at(*s.node(key), s.label(key) + ": " + choice_problem(text, names));
    return false;
  }
  out = static_cast<Enum>(found - names.begin());
  return true;
}
// The hosts `spec` expands to; the error: "bad host name 'x': <why>" for the
// first bad name, or the hostlist's own error.
Result<std::vector<HostSpec>> expand_checked_hosts(std::string_view spec);

// Where host-source files named in the job file were given (for messages).
struct SourcePlaces {
  Position hostfile;
  Position discovery_script;
  Position split_logs;  // job.split_logs and job.fold, for the rules between keys
  Position fold;
  Position env_file;    // [job] env_file, for its read errors
};

// What the reader of one section is given: the section as the file has it
// (null when absent; not always a table) and the job it fills.
struct SectionInput {
  std::string_view name;
  const toml::node* node;
  const std::string& origin;
  JobSpec& job;
  SourcePlaces& places;
  Diagnostics& diag;

  const toml::table* table() const { return node == nullptr ? nullptr : node->as_table(); }
  // Its typed keys; making it reports the unknown ones, so a reader makes one.
  Section keys() const { return Section(table(), std::string(name), diag); }
};

// One row of the table of sections (job_sections.cpp): a section, the keys it
// accepts (none listed: any, as [host_env]'s patterns) and its reader.
struct SectionReader {
  std::string name;
  std::vector<std::string> keys;
  void (*read)(const SectionInput& in);
};

// The section readers, one per section; read_sections calls them in this order.
void read_job(const SectionInput& in);
void read_hosts(const SectionInput& in);
void read_launch(const SectionInput& in);
void read_placement(const SectionInput& in);
void read_ssh(const SectionInput& in);
void read_kubernetes(const SectionInput& in);
void read_slurm(const SectionInput& in);
void read_mpirun(const SectionInput& in);
void read_mpi(const SectionInput& in);
void read_rendezvous(const SectionInput& in);
void read_torch(const SectionInput& in);
void read_tensorflow(const SectionInput& in);
void read_sweep(const SectionInput& in);
void read_watchdog(const SectionInput& in);
void read_preflight(const SectionInput& in);
void read_container(const SectionInput& in);
void read_host_env(const SectionInput& in);

// An array of strings at `key`, each element checked by `accept` (which
// reports); a non-string element is reported here.
void read_string_array(const Section& section, std::string_view key,
                       const std::function<void(const toml::node&, const std::string&)>& accept);

// A path named in the job file: "~/" is HOME's, a relative one is the job
// file's folder's (always with a '/', so that running it never searches PATH).
std::string relative_to_job(const std::string& path, const std::string& origin);
// A path key that must not be empty, relative_to_job; its place when read.
Position read_path(const Section& s, std::string_view key, const std::string& origin, std::string& out);

// A table of NAME = value ([job] env, [host_env."P"]): names checked, values
// strings, integers or booleans, in the file's order; problems reported as
// `label`.NAME.
EnvList read_env_table(const toml::table& table, std::string_view label, Diagnostics& diag);

// The team's environment (issue 31; job_environment.cpp): [job] setup and
// env_file, [launch] bind, [container], [host_env."PATTERN"] (`node` the
// host_env table, null when absent), and --env-file / --bind, which also
// read the env file.
void read_team_keys(const Section& job_section, const std::string& origin, JobSpec& job, SourcePlaces& places);
void read_bind(const Section& launch, JobSpec& job);
void apply_team_overrides(const Overrides& overrides, JobSpec& job, const SourcePlaces& places, Diagnostics& diag);

// The elastic keys of [launch] (job_placement.cpp).
void read_elastic(const Section& launch, JobSpec& job);
// --np "N" or "MIN:MAX" (MIN sets launch.min_np).
void apply_np_range(const std::string& text, JobSpec& job, Diagnostics& diag);
// [job] stop_signal, checkpoint_signal, checkpoint_grace, requeue_exit_code.
void read_stop(const Section& s, StopSection& stop);

// Every section of the file, each by its reader; reports unknown sections
// and top-level keys.
void read_sections(const toml::table& root, const std::string& origin, JobSpec& job,
                   SourcePlaces& places, Diagnostics& diag);
void apply_overrides(const Overrides& overrides, JobSpec& job, SourcePlaces& places,
                     Diagnostics& diag);
// [job]'s output keys (output_ranks, prefix, timestamps, split_logs, fold;
// job_output.cpp), their options, and the rules between them.
void read_output_keys(const Section& s, JobSpec& job, SourcePlaces& places);
void apply_output_overrides(const Overrides& overrides, JobSpec& job, const SourcePlaces& places,
                            Diagnostics& diag);
// Checks that the effective hostfile is readable and the discovery script runnable.
void check_source_files(const JobSpec& job, const SourcePlaces& places, Diagnostics& diag);

} // namespace ddl::job_detail
