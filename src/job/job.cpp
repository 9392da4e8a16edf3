// SPDX-License-Identifier: MIT
// Loads the job file: read it (size-capped), parse the TOML, read every
// section, apply the command-line overrides, report every problem at once.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/file.hpp"

namespace ddl {

namespace {

using job_detail::Diagnostics;
using job_detail::SourcePlaces;

std::string default_name(const std::string& origin) {
  std::string stem = std::filesystem::path(origin).stem().string();
  return stem.empty() ? "ddl" : stem;
}

Result<std::string> read_job_text(const std::string& path) {
  auto problem = [&path](std::string_view what) {
    return fail(ExitCode::usage, fmt::format("{}: {}", path, what));
  };
  CappedRead file = read_capped(path, k_max_job_file_bytes);
  switch (file.status) {
  case CappedRead::Status::ok: return std::move(file.text);
  case CappedRead::Status::directory: return problem("is a directory, not a job file");
  case CappedRead::Status::too_large:
    return problem(fmt::format("job file is larger than {} bytes", k_max_job_file_bytes));
  case CappedRead::Status::cannot_open:
  case CappedRead::Status::read_error: break;
  }
  return problem("cannot read job file: " + std::generic_category().message(file.error));
}

void parse_sections(std::string_view text, const std::string& origin, JobSpec& job,
                    SourcePlaces& places, Diagnostics& diag) {
  try {
    toml::table root = toml::parse(text, origin);
    job_detail::read_sections(root, origin, job, places, diag);
  } catch (const toml::parse_error& error) {
    job_detail::Position where = job_detail::position_of(error.source());
    where.line = std::max(where.line, 1U);
    where.column = std::max(where.column, 1U);
    diag.at(where, std::string(error.description()));
  }
}

// Parses and validates `text` (nullptr: no job file) and applies `overrides`.
Result<JobSpec> build_job(const std::string_view* text, const std::string& origin,
                          const Overrides& overrides) {
  JobSpec job;
  job.source = origin;
  job.name = default_name(origin);
  Diagnostics diag(origin);
  SourcePlaces places;
  if (text != nullptr) {
    if (text->size() > k_max_job_file_bytes) {
      return fail(ExitCode::usage, fmt::format("{}: job file is larger than {} bytes", origin,
                                               k_max_job_file_bytes));
    }
    if (auto deep = job_detail::too_deeply_nested(*text, k_max_job_nesting)) {
      diag.at(*deep, fmt::format("nested more than {} levels deep (tables, arrays, inline "
                                 "tables and dotted keys together)",
                                 k_max_job_nesting));
    } else {
      parse_sections(*text, origin, job, places, diag);
    }
  }
  job_detail::apply_overrides(overrides, job, places, diag);
  job_detail::apply_output_overrides(overrides, job, places, diag);
  job_detail::apply_team_overrides(overrides, job, places, diag);
  job_detail::check_source_files(job, places, diag);
  if (!diag.empty()) {
    return fail(ExitCode::usage, diag.text());
  }
  return job;
}

} // namespace

Result<std::string> read_job_file(const std::string& path) { return read_job_text(path); }

Result<JobSpec> parse_job(std::string_view text, const std::string& origin,
                          const Overrides& overrides) {
  return build_job(&text, origin, overrides);
}

Result<JobSpec> load_job(const std::string& path, const Overrides& overrides) {
  if (path.empty()) {
    return build_job(nullptr, path, overrides);
  }
  auto text = read_job_text(path);
  if (!text) {
    return fail(text.error());
  }
  std::string_view view = *text;
  return build_job(&view, path, overrides);
}

Result<void> require_command(const JobSpec& job) {
  if (job.command.empty()) {
    return fail(ExitCode::usage, "no command: give one in [job] command, or after the options: ddl run [JOB] [options] PROGRAM [args]");
  }
  return {};
}

} // namespace ddl
