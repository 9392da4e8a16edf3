// SPDX-License-Identifier: MIT
// Other launchers' habits on ddl's command line; see cmd/habits.hpp.
#include "cmd/habits.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <string_view>

#include <fmt/core.h>
#include <unistd.h>

#include "src/persona/registry.hpp"
#include "src/util/text.hpp"

namespace ddl::cmd {

namespace {

// A spelling of another launcher with ddl's meaning: renamed.
struct Rename {
  std::string_view word;
  std::string_view ddl;
};

constexpr std::array k_renames = {
    Rename{"-np", "--np"},          Rename{"--num-proc", "--np"},       Rename{"-n", "--np"},
    Rename{"--host", "--hosts"},    Rename{"-host", "--hosts"},         Rename{"-hostfile", "--hostfile"},
    Rename{"--machinefile", "--hostfile"}, Rename{"-machinefile", "--hostfile"},
    Rename{"-i", "--include"},      Rename{"-e", "--exclude"},
};

// A spelling of a launcher whose personality takes it (`ddl torchrun`,
// `ddl deepspeed`): refused by `ddl run`, with that personality and ddl
// run's own form. The spellings are the personalities' own (their
// run_habits); one with '-' for '_' (--num-gpus) is refused as well.
struct Refusal {
  std::string word;
  std::string_view persona;  // "torchrun", "deepspeed"
  persona::RunHabit habit;
};

// What `ddl run` answers for a launcher's option: its meaning and ddl run's form.
std::string_view answer(persona::RunHabit habit) {
  using persona::RunHabit;
  switch (habit) {
  case RunHabit::ranks_per_host:
    return "ranks per host; with ddl run: -H HOST:N,HOST:N (this machine alone: --np N)";
  case RunHabit::node_count: return "node count; with ddl run: -H HOST:N,HOST:N or --hostfile FILE";
  case RunHabit::node_rank:
    return "node rank; ddl starts and numbers every node itself (DDL_NODE_RANK, GROUP_RANK): run it once, "
           "with every host in -H or --hostfile";
  case RunHabit::master_port: return "master port; with ddl run: [torch] master_port in the job file (0 = a free port)";
  case RunHabit::master_addr:
    return "master address; ddl sets MASTER_ADDR to rank 0's host address: list that host first in -H";
  case RunHabit::rendezvous: return "rendezvous; ddl runs its own ([rendezvous] address, port and timeout in the job file)";
  }
  return "";
}

const std::vector<Refusal>& refusals() {
  static const std::vector<Refusal> all = [] {
    std::vector<Refusal> out;
    for (const persona::Persona& launcher : persona::personas()) {
      if (launcher.run_habits == nullptr) {
        continue;
      }
      for (const persona::HabitSpelling& habit : launcher.run_habits()) {
        std::string hyphens(habit.spelling);
        std::ranges::replace(hyphens, '_', '-');
        out.push_back({std::string(habit.spelling), launcher.name, habit.habit});
        if (hyphens != habit.spelling) {
          out.push_back({hyphens, launcher.name, habit.habit});
        }
      }
    }
    return out;
  }();
  return all;
}

// "torchrun's", "DeepSpeed's".
std::string launcher_of(std::string_view persona) {
  return persona == "deepspeed" ? "DeepSpeed's" : std::string(persona) + "'s";
}

// The subcommands whose leftover words check_leftover_words answers.
std::set<const CLI::App*>& answered_subcommands() {
  static std::set<const CLI::App*> subs;
  return subs;
}

// Subcommands whose "--" words become the ranks' command.
bool takes_command(const CLI::App& sub) { return sub.get_name() == "run" || sub.get_name() == "sweep"; }

// The subcommand that args (args[0] onward) name, nested ones included, or
// nullptr; `words` is set to how many words name it.
const CLI::App* named_subcommand(const CLI::App& app, const std::vector<std::string>& args, std::size_t& words) {
  const CLI::App* current = &app;
  words = 0;
  while (words < args.size()) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : current->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == args[words]) {
        next = sub;
      }
    }
    if (next == nullptr) {
      break;
    }
    current = next;
    ++words;
  }
  return current == &app ? nullptr : current;
}

// The deepest subcommand chosen by the parse, or nullptr.
const CLI::App* chosen_subcommand(const CLI::App& app) {
  const CLI::App* current = nullptr;
  for (const CLI::App* next = &app; next != nullptr;) {
    auto chosen = next->get_subcommands();
    current = next == &app ? current : next;
    next = chosen.empty() ? nullptr : chosen.front();
  }
  return current;
}

std::vector<std::string> option_names(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* option : sub.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      names.push_back("--" + name);
    }
    for (const std::string& name : option->get_snames()) {
      names.push_back("-" + name);
    }
  }
  return names;
}

std::string command_path(const CLI::App& sub) {
  std::string path = sub.get_name();
  for (const CLI::App* parent = sub.get_parent(); parent != nullptr && parent->get_parent() != nullptr;
       parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

Unexpected unknown_option(const CLI::App& sub, const std::string& word) {
  const std::string name = word.substr(0, word.find('='));
  const std::string hint = did_you_mean(name, option_names(sub));
  return fail(ExitCode::usage, fmt::format("unknown option '{}' for 'ddl {}'{}", name, command_path(sub),
                                           hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) {
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// A JOB word that names no job file: no such path and no .toml ending.
bool names_no_job_file(const std::string& word) {
  std::error_code ec;
  return !word.empty() && !word.ends_with(".toml") && !std::filesystem::exists(word, ec);
}

Unexpected command_without_dashes(const CLI::App& sub, const std::vector<std::string>& command,
                                  const std::string& first_stray) {
  return fail(ExitCode::usage,
              fmt::format("unexpected argument '{}': to run a command, put it after '--': ddl {} [JOB] [options] -- {}",
                          first_stray, command_path(sub), joined(command)));
}

} // namespace

namespace {

// The option of `sub` that `word` names ("--np", or "-np" renamed), or nullptr.
const CLI::Option* option_named(const CLI::App& sub, const std::string& word) {
  if (const CLI::Option* option = sub.get_option_no_throw(word)) {
    return option;
  }
  for (const Rename& rename : k_renames) {
    if (word == rename.word) {
      return sub.get_option_no_throw(std::string(rename.ddl));
    }
  }
  return nullptr;
}

// Whether `word`, the first positional word of `ddl run`, is its JOB file:
// it ends in .toml, or names a file that is no program (not executable), or
// a "--" follows it (`ddl run JOB -- COMMAND`, as ddl sweep's trials run).
bool is_job_word(const std::string& word, bool dashes_follow) {
  if (word.ends_with(".toml") || dashes_follow) {
    return true;
  }
  std::error_code ec;
  return std::filesystem::is_regular_file(word, ec) && ::access(word.c_str(), X_OK) != 0;
}

// Where `ddl run`'s program starts: the first word from `first` on that is
// neither an option (with its value) nor the JOB (is_job_word); args.size()
// when there is none. A "--" is noted in `dashes`.
std::size_t program_start(const CLI::App& run, const std::vector<std::string>& args, std::size_t first,
                          bool& dashes) {
  bool job_seen = false;
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      dashes = true;
      return i;
    }
    if (word.size() > 1 && word.starts_with('-')) {
      const CLI::Option* option = option_named(run, word.substr(0, word.find('=')));
      if (option != nullptr && option->get_expected_max() > 0 && word.find('=') == std::string::npos) {
        ++i;  // its value
      }
      continue;
    }
    const bool dashes_follow = std::find(args.begin() + static_cast<std::ptrdiff_t>(i), args.end(), "--") != args.end();
    if (!job_seen && is_job_word(word, dashes_follow)) {
      job_seen = true;
      continue;
    }
    return i;
  }
  return args.size();
}

// Options of `ddl run` that no launcher and few programs have: after the
// program they are the program's, which a user who meant ddl's is told.
constexpr std::array<std::string_view, 13> k_ddl_only = {
    "--dry-run", "--np", "--stdin", "--output-ranks", "--fold", "--max-restarts", "--split-logs", "--strict-logs",
    "--timestamps", "--env-file", "--backend", "--log-dir", "--preflight"};

// One line on stderr when ddl's own options stand after the program (found
// without "--"): they go to the program, as mpirun and torchrun would do.
void note_ddl_options_after_program(const std::vector<std::string>& command) {
  std::vector<std::string> seen;
  for (std::size_t i = 1; i < command.size(); ++i) {
    const std::string word = command[i].substr(0, command[i].find('='));
    if (std::ranges::find(k_ddl_only, word) != k_ddl_only.end() && std::ranges::find(seen, word) == seen.end()) {
      seen.push_back(word);
    }
  }
  if (seen.empty()) {
    return;
  }
  std::string words;
  for (const auto& word : seen) {
    words += (words.empty() ? "" : ", ") + word;
  }
  fmt::print(stderr, "ddl: note: {} after the program goes to {}, not to ddl (as mpirun and torchrun do); put ddl's "
                     "options before the program\n",
             words, command.front());
}

} // namespace

std::vector<std::string> take_command(const CLI::App& app, std::vector<std::string>& args) {
  std::size_t first = 0;
  const CLI::App* sub = named_subcommand(app, args, first);
  bool dashes = false;
  std::size_t start = 0;
  if (sub != nullptr && sub->get_name() == "run") {
    start = program_start(*sub, args, first, dashes);
  } else {
    start = static_cast<std::size_t>(std::find(args.begin(), args.end(), "--") - args.begin());
    dashes = start < args.size();
  }
  const std::size_t from = std::min(args.size(), start + (dashes ? 1 : 0));
  std::vector<std::string> command(args.begin() + static_cast<std::ptrdiff_t>(from), args.end());
  if (!dashes && !command.empty()) {
    note_ddl_options_after_program(command);
  }
  args.erase(args.begin() + static_cast<std::ptrdiff_t>(start), args.end());
  return command;
}

Result<void> translate_habits(const CLI::App& app, std::vector<std::string>& args) {
  std::size_t first = 0;
  const CLI::App* sub = named_subcommand(app, args, first);
  if (sub == nullptr || sub->get_option_no_throw("--np") == nullptr) {
    return {};
  }
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string word = args[i].substr(0, args[i].find('='));
    const std::string value = args[i].substr(word.size());
    for (const Refusal& refusal : refusals()) {
      if (word == refusal.word) {
        return fail(ExitCode::usage,
                    fmt::format("{0} is {1} {2}; `ddl {3}` takes the whole {3} line as it is", word,
                                launcher_of(refusal.persona), answer(refusal.habit), refusal.persona));
      }
    }
    for (const Rename& rename : k_renames) {
      if (word == rename.word && sub->get_option_no_throw(word) == nullptr) {
        args[i] = std::string(rename.ddl) + value;
      }
    }
  }
  return {};
}

void keep_leftover_words(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    // A command that takes any words itself (rsh: orted's) keeps them.
    if (!sub->get_allow_extras()) {
      sub->allow_extras();
      answered_subcommands().insert(sub);
    }
    keep_leftover_words(*sub);
  }
}

Result<void> check_leftover_words(const CLI::App& app) {
  const CLI::App* sub = chosen_subcommand(app);
  if (sub == nullptr || !answered_subcommands().contains(sub)) {
    return {};
  }
  const std::vector<std::string> leftover = sub->remaining();
  for (const std::string& word : leftover) {
    if (word.size() > 1 && word.starts_with('-')) {
      return unknown_option(*sub, word);
    }
  }
  const CLI::Option* job = sub->get_option_no_throw("job");
  const std::string job_word = job != nullptr && job->count() > 0 ? job->as<std::string>() : "";
  if (leftover.empty()) {
    if (takes_command(*sub) && sub->get_name() != "run" && names_no_job_file(job_word)) {
      return fail(ExitCode::usage,
                  fmt::format("no job file '{}': to run a command, put it after '--': ddl {} [options] -- {}",
                              job_word, command_path(*sub), job_word));
    }
    return {};
  }
  if (!takes_command(*sub)) {
    return fail(ExitCode::usage, fmt::format("unexpected argument '{}': 'ddl {}' takes one JOB file",
                                             leftover.front(), command_path(*sub)));
  }
  std::vector<std::string> command = leftover;
  if (names_no_job_file(job_word)) {
    command.insert(command.begin(), job_word);
  }
  return command_without_dashes(*sub, command, leftover.front());
}

} // namespace ddl::cmd
