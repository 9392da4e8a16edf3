// SPDX-License-Identifier: MIT
#include "src/sweep/sweep_job.hpp"

#include <array>
#include <ctime>
#include <filesystem>

#include <fmt/core.h>

#include "src/plan/plan.hpp"
#include "src/sweep/results.hpp"
#include "src/util/own_path.hpp"

namespace ddl::sweep {

namespace {

namespace fs = std::filesystem;

// --resume: the journal's snapshot, so that the rest runs as the sweep
// began; a job file or trial options given again must be the same.
Result<JobSnapshot> resumed_snapshot(const std::string& resume_dir, const std::string& job_file,
                                     const Overrides& overrides, const Json& stored) {
  auto snapshot = snapshot_from_json(stored);
  if (!snapshot) {
    return fail(ExitCode::usage, fmt::format("{}: {}", resume_dir, snapshot.error().message));
  }
  if (!job_file.empty()) {
    auto text = read_job_file(job_file);
    if (!text) return fail(text.error());
    if (*text != snapshot->toml) {
      return fail(ExitCode::usage, fmt::format("{}: the job file changed since this sweep began; resume without "
                                               "it to run the rest as the sweep began (its copy is in {}/{}), "
                                               "or start a new sweep",
                                               job_file, resume_dir, k_journal_name));
    }
  }
  const JobSnapshot given{"", "", trial_options(overrides)};
  if (has_trial_options(overrides) &&
      snapshot_json(given)["options"] != snapshot_json(*snapshot)["options"]) {
    return fail(ExitCode::usage, fmt::format("{}: the options -x, --timeout, --max-restarts, --backend and the "
                                             "command differ from the ones this sweep began with ({}); resume "
                                             "without them, or with the same",
                                             resume_dir,
                                             to_json_text(snapshot_json(*snapshot)["options"],
                                                          JsonStyle::spaced)));
  }
  return snapshot;
}

Json trials_json(const std::vector<Trial>& trials) {
  Json list = Json::array();
  for (const Trial& trial : trials) list.push_back(Json{{"trial", trial.index}, {"params", params_json(trial)}});
  return list;
}

} // namespace

Result<SweepJob> read_sweep_job(const std::string& resume_dir, const std::string& job_file,
                                const Overrides& overrides, const std::optional<JournalState>& journal) {
  if (journal && journal->sweep.contains("snapshot")) {
    auto snapshot = resumed_snapshot(resume_dir, job_file, overrides, journal->sweep["snapshot"]);
    if (!snapshot) return fail(snapshot.error());
    auto job = snapshot_job(*snapshot, overrides);
    if (!job) return fail(job.error());
    return SweepJob{std::move(*snapshot), std::move(*job)};
  }
  // A new sweep (or the journal of a ddl that kept no snapshot): the file now.
  const std::string file = job_file.empty() ? journal->sweep.value("job", "") : job_file;
  auto text = read_job_file(file);
  if (!text) return fail(text.error());
  auto job = parse_job(*text, file, overrides);
  if (!job) return fail(job.error());
  return SweepJob{{fs::absolute(file).string(), std::move(*text), trial_options(overrides)}, std::move(*job)};
}

Result<int> trial_np(const JobSpec& job, const Overrides& overrides) {
  if (overrides.np) {
    if (overrides.np->find(':') != std::string::npos) {
      return fail(ExitCode::usage, fmt::format("--np: {}: ddl sweep takes the ranks of each trial, N, not MIN:MAX",
                                               *overrides.np));
    }
    return *job.launch.np.max;
  }
  const NpRange& launch = job.launch.np;
  if (launch.elastic()) {
    return fail(ExitCode::usage, fmt::format("{}: [launch] np or min_np: ddl sweep takes the ranks of each trial, "
                                             "N (sweep.np), not a range",
                                             job.source));
  }
  if (job.sweep->np && launch.max && *launch.max != *job.sweep->np) {
    return fail(ExitCode::usage, fmt::format("{}: sweep.np = {} and [launch] np = {}: a trial's ranks are sweep.np; "
                                             "keep one of the two",
                                             job.source, *job.sweep->np, *launch.max));
  }
  return job.sweep->np.value_or(launch.max.value_or(1));
}

SlotGpus slot_gpus(JobSpec job, const Inventory& hosts) {
  SlotGpus out;
  int total = 0;
  for (const Host& host : hosts) total += host.slots;
  job.launch.np = NpRange{total, std::nullopt};
  auto plan = make_plan(job, hosts);
  if (!job.launch.bind_gpus || !plan || total == 0) {
    return out;
  }
  for (const Host& host : hosts) {
    std::vector<std::vector<int>> slots;
    for (const RankSlot& rank : plan->ranks) {
      if (plan->hosts.at(rank.host_index).name == host.name) {
        slots.push_back(rank.gpus);
      }
    }
    slots.resize(static_cast<std::size_t>(host.slots));
    out.push_back(std::move(slots));
  }
  return out;
}

std::string default_sweep_dir(const JobSpec& job) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "%Y%m%d-%H%M%S", &utc);
  std::string dir = fmt::format("ddl-sweeps/{}-{}", job.name, stamp.data());
  for (int n = 2; fs::exists(dir); ++n) dir = fmt::format("ddl-sweeps/{}-{}-{}", job.name, stamp.data(), n);
  return dir;
}

Json sweep_record(const SweepJob& sweep_job, const std::vector<Trial>& trials) {
  return Json{{"event", "sweep"},
              {"version", 1},
              {"job", sweep_job.snapshot.file},
              {"name", sweep_job.job.name},
              {"trials", trials_json(trials)},
              {"snapshot", snapshot_json(sweep_job.snapshot)}};
}

Result<std::vector<TrialOutcome>> resumed_outcomes(const std::string& dir, const std::vector<Trial>& trials,
                                                   const JournalState& state) {
  if (state.sweep.value("trials", Json::array()) != trials_json(trials)) {
    return fail(ExitCode::usage, fmt::format("{}: the job's [sweep] now makes other trials than this sweep's "
                                             "journal lists; resume with the job file as it was", dir));
  }
  std::vector<TrialOutcome> outcomes(trials.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) outcomes[i].trial = static_cast<int>(i);
  for (const auto& [index, record] : state.finished) {
    if (index < 0 || static_cast<std::size_t>(index) >= outcomes.size()) continue;
    TrialOutcome& out = outcomes[static_cast<std::size_t>(index)];
    out.result = record.value("result", "failed");
    out.exit_code = record.value("exit_code", 0);
    out.seconds = record.value("seconds", 0.0);
    out.hosts = record.value("hosts", "");
    out.attempts = record.value("attempt", 0) + 1;
    if (record.contains("metric") && record["metric"].is_number()) out.metric = record["metric"].get<double>();
  }
  return outcomes;
}

int sweep_exit_code(const SweepOutcome& outcome) {
  if (outcome.stop_signal != 0) return 128 + outcome.stop_signal;
  for (const auto& out : outcome.trials) {
    if (out.result != "ok") return 1;
  }
  return 0;
}

Result<void> own_sweep_folders(const std::string& dir, const std::vector<int>& todo) {
  if (auto own = own_folder(dir, "sweep folder", true); !own) return fail(own.error());
  for (int trial : todo) {
    const std::string folder = dir + "/" + trial_folder(trial);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(folder, ec))) continue;
    if (auto own = own_folder(folder, "sweep folder", false); !own) return fail(own.error());
  }
  return {};
}

} // namespace ddl::sweep
