// SPDX-License-Identifier: MIT
// What the personalities share; see src/persona/persona.hpp.
#include "src/persona/persona.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/core.h>

#include "src/inventory/inventory.hpp"
#include "src/util/env_file.hpp"
#include "src/util/net.hpp"
#include "src/util/text.hpp"


namespace ddl::persona {

namespace {

const Option* find_option(std::span<const Option> table, std::string_view name) {
  for (const Option& option : table) {
    if (std::ranges::find(option.names, name) != option.names.end()) {
      return &option;
    }
  }
  return nullptr;
}

std::vector<std::string> all_names(std::span<const Option> table) {
  std::vector<std::string> names;
  for (const Option& option : table) {
    names.insert(names.end(), option.names.begin(), option.names.end());
  }
  return names;
}

Unexpected unknown_option(std::span<const Option> table, std::string_view word, std::string_view command) {
  const std::string hint = did_you_mean(word, all_names(table));
  return fail(ExitCode::usage, fmt::format("unknown option '{}' for 'ddl {}'{}", word, command,
                                           hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
}

// The option a word names, and the value written into it ("--x=1", "-r3").
struct Named {
  const Option* option = nullptr;
  std::string spelled;
  std::optional<std::string> attached;
};

Named name_word(std::span<const Option> table, const std::string& word, Dashes dashes) {
  const std::size_t equals = word.find('=');
  const std::string head = word.substr(0, equals);
  if (const Option* option = find_option(table, head)) {
    return {option, head, equals == std::string::npos ? std::nullopt : std::optional(word.substr(equals + 1))};
  }
  // Open MPI: "-np" is "--np".
  if (dashes == Dashes::single_too && head.size() > 2 && head[1] != '-') {
    if (const Option* option = find_option(table, "-" + head)) {
      return {option, head, equals == std::string::npos ? std::nullopt : std::optional(word.substr(equals + 1))};
    }
  }
  // argparse: a short option with its value attached, "-r3".
  if (word.size() > 2 && word[1] != '-') {
    const Option* option = find_option(table, word.substr(0, 2));
    if (option != nullptr && option->arity == Arity::value) {
      return {option, word.substr(0, 2), word.substr(2)};
    }
  }
  return {};
}

} // namespace

Machine this_machine() {
  Machine machine;
  machine.getenv = [](const char* name) { return std::getenv(name); };
  machine.is_file = [](const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec);
  };
  std::error_code ec;
  machine.cwd = std::filesystem::current_path(ec).string();
  const char* home = std::getenv("HOME");
  machine.home = home != nullptr ? home : "";
  machine.cpus = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  machine.gpus = [] { return local_gpu_count(); };
  machine.env_file = [](const std::string& path) { return read_env_file(path); };
  return machine;
}

Result<Words> split_words(std::span<const Option> table, const std::vector<std::string>& args,
                          std::string_view command, Dashes dashes) {
  Words words;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      words.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      return words;
    }
    if (word.size() < 2 || word[0] != '-') {
      words.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      return words;
    }
    Named named = name_word(table, word, dashes);
    if (named.option == nullptr) {
      return unknown_option(table, word.substr(0, word.find('=')), command);
    }
    Given given{named.option, named.spelled, {}};
    const std::size_t wanted = named.option->arity == Arity::flag ? 0 : named.option->arity == Arity::value ? 1 : 2;
    if (wanted == 0 && named.attached) {
      return fail(ExitCode::usage, fmt::format("{}: takes no value (got '{}')", named.spelled, *named.attached));
    }
    if (named.attached) {
      given.values.push_back(*named.attached);
    }
    while (given.values.size() < wanted) {
      if (++i >= args.size()) {
        const std::string_view value_name = named.option->value_name;
        return fail(ExitCode::usage,
                    fmt::format("{}: needs {}{}", named.spelled, wanted == 2 ? "two values" : "a value",
                                value_name.empty() ? std::string() : fmt::format(" ({})", value_name)));
      }
      given.values.push_back(args[i]);
    }
    words.options.push_back(std::move(given));
  }
  return words;
}

Result<std::vector<std::string>> read_words(std::span<const Option> table, const std::vector<std::string>& args,
                                            std::string_view command, Dashes dashes, const ReadOption& read,
                                            std::vector<Given> before) {
  auto words = split_words(table, args, command, dashes);
  if (!words) {
    return fail(words.error());
  }
  before.insert(before.end(), words->options.begin(), words->options.end());
  for (const Given& given : before) {
    if (auto done = read(given); !done) {
      return fail(done.error());
    }
  }
  return std::move(words->program);
}

Unexpected option_error(const Given& given, std::string_view why) {
  std::string shown = given.spelled;
  for (const std::string& value : given.values) {
    shown += (given.spelled.starts_with("PET_") ? "=" : " ") + value;
  }
  return fail(ExitCode::usage, fmt::format("{}: {}", shown, why));
}

Result<int> int_value(const Given& given, long long min, long long max) {
  auto number = parse_int(given.value());
  if (!number) {
    return option_error(given, "not a whole number");
  }
  if (*number < min || *number > max) {
    return option_error(given, max == INT32_MAX ? fmt::format("must be at least {}", min)
                                                : fmt::format("must be between {} and {}", min, max));
  }
  return static_cast<int>(*number);
}

Result<std::vector<std::string>> shell_words(const Given& given) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  const std::string& text = given.value();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (quote == '"' && c == '\\' && i + 1 < text.size() &&
                 std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    return option_error(given, fmt::format("no closing {}", quote));
  }
  if (in_word) {
    words.push_back(std::move(word));
  }
  return words;
}

std::vector<Option> ddl_options(std::initializer_list<DdlOption> wanted) {
  static const std::vector<Option> all = {
      {{"--job"}, Arity::value, "FILE", "ddl job file (TOML) whose settings apply under these options",
       static_cast<int>(DdlOption::job)},
      {{"--dry-run"}, Arity::flag, "", "Print ddl's plan (hosts, ranks, env, command); launch nothing",
       static_cast<int>(DdlOption::dry_run)},
      {{"--name"}, Arity::value, "NAME", "The job's name in ddl ps (default: ddl)", static_cast<int>(DdlOption::name)},
      {{"-F", "--ssh-config"}, Arity::value, "FILE", "OpenSSH config to read (\"none\": none)",
       static_cast<int>(DdlOption::ssh_config)},
      {{"--timeout"}, Arity::value, "DUR", "End the whole job after DUR (30s, 2h); exit 124",
       static_cast<int>(DdlOption::timeout)},
      {{"-v", "--verbose"}, Arity::flag, "", "ddl explains its choices (repeat for debug)",
       static_cast<int>(DdlOption::verbose)},
      {{"-q", "--quiet"}, Arity::flag, "", "ddl prints only errors", static_cast<int>(DdlOption::quiet)},
      {{"-h", "--help"}, Arity::flag, "", "This help", static_cast<int>(DdlOption::help)},
      {{"--backend"}, Arity::value, "NAME", "ddl backend: auto, local, ssh, kubernetes, mpirun or slurm",
       static_cast<int>(DdlOption::backend)},
      {{"-H", "--hosts"}, Arity::value, "SPEC", "ddl's hosts, e.g. node[01-04]:8,gpu-a:4",
       static_cast<int>(DdlOption::hosts)},
      {{"--hostfile"}, Arity::value, "FILE", "Hosts from an Open MPI, DeepSpeed or MPICH hostfile",
       static_cast<int>(DdlOption::hostfile)},
      {{"--python"}, Arity::value, "PATH", "Interpreter the script runs with (default: [job] python, else python3)",
       static_cast<int>(DdlOption::python)},
      {{"--stdin"}, Arity::value, "R|all|none", "Which ranks read ddl's stdin (default: rank 0)",
       static_cast<int>(DdlOption::stdin_ranks)},
      {{"--preflight"}, Arity::flag, "", "Check the network among the hosts first; a slow host stops the job (exit 3)",
       static_cast<int>(DdlOption::preflight)},
      {{"--no-preflight"}, Arity::flag, "", "No check before the ranks start", static_cast<int>(DdlOption::no_preflight)},
  };
  std::vector<Option> rows;
  for (DdlOption option : wanted) {
    auto found = std::ranges::find(all, static_cast<int>(option), &Option::id);
    rows.push_back(*found);
  }
  return rows;
}

std::vector<Option> with_ddl_options(std::vector<Option> rows, std::initializer_list<DdlOption> wanted) {
  std::vector<Option> own = ddl_options(wanted);
  rows.insert(rows.end(), own.begin(), own.end());
  return rows;
}

std::vector<HabitSpelling> habit_spellings(std::span<const Option> table,
                                           std::initializer_list<std::pair<int, RunHabit>> habits) {
  std::vector<HabitSpelling> spellings;
  for (const Option& option : table) {
    for (const auto& [id, habit] : habits) {
      if (option.id != id) {
        continue;
      }
      for (std::string_view name : option.names) {
        spellings.push_back({name, habit});
      }
    }
  }
  return spellings;
}

bool apply_ddl_option(const Given& given, Launch& launch, std::optional<std::string>& python) {
  switch (static_cast<DdlOption>(given.option->id)) {
  case DdlOption::job: launch.job_file = given.value(); return true;
  case DdlOption::dry_run: launch.dry_run = true; return true;
  case DdlOption::name: launch.overrides.name = given.value(); return true;
  case DdlOption::ssh_config: launch.overrides.ssh_config = given.value(); return true;
  case DdlOption::timeout: launch.overrides.timeout = given.value(); return true;
  case DdlOption::verbose: ++launch.verbose; return true;
  case DdlOption::quiet: launch.quiet = true; return true;
  case DdlOption::help: launch.help = true; return true;
  case DdlOption::backend: launch.overrides.backend = given.value(); return true;
  case DdlOption::hosts: launch.overrides.hosts.push_back(given.value()); return true;
  case DdlOption::hostfile: launch.overrides.hostfile = given.value(); return true;
  case DdlOption::python: python = given.value(); return true;
  case DdlOption::stdin_ranks: launch.overrides.stdin_ranks = given.value(); return true;
  case DdlOption::preflight: launch.overrides.preflight = true; return true;
  case DdlOption::no_preflight: launch.overrides.no_preflight = true; return true;
  }
  return false;
}

std::optional<std::string> python_on_path(const std::string& name, const Machine& machine) {
  const char* path = machine.getenv("PATH");
  if (name.find('/') != std::string::npos || path == nullptr) {
    return std::nullopt;
  }
  for (const std::string& dir : split(path, ':')) {
    if (dir.starts_with('/') && machine.is_file(dir + "/" + name)) {
      return dir + "/" + name;
    }
  }
  return std::nullopt;
}

JobEdit program_edit(std::vector<std::string> program, Interpreter interpreter, std::optional<std::string> python,
                     PerRank per_rank, Locate locate) {
  return [=](JobSpec& job) {
    std::vector<std::string> argv;
    if (interpreter != Interpreter::none) {
      std::string chosen = python.value_or(job.python);
      if (auto found = !python && locate ? locate(chosen) : std::nullopt) {
        chosen = *found;
      }
      argv = {chosen, "-u"};
      if (interpreter == Interpreter::python_module) {
        argv.emplace_back("-m");
      }
    }
    const std::size_t through_script = argv.size() + 1;
    argv.insert(argv.end(), program.begin(), program.end());
    if (!per_rank.local_rank_flag.empty() || !per_rank.exports.empty()) {
      // sh puts FLAG=$LOCAL_RANK after the first N words of "$@" (N is its
      // first argument), then execs them.
      std::string insert = per_rank.local_rank_flag.empty()
                               ? std::string()
                               : fmt::format("if [ \"$i\" -eq \"$n\" ]; then set -- \"$@\" \"{}=$LOCAL_RANK\"; fi; ",
                                             per_rank.local_rank_flag);
      std::string script = fmt::format("{}n=$1; shift; i=0; for a do shift; i=$((i + 1)); set -- \"$@\" \"$a\"; "
                                       "{}done; exec \"$@\"",
                                       per_rank.exports.empty() ? "" : per_rank.exports + "; ", insert);
      argv.insert(argv.begin(), {"/bin/sh", "-c", script, "ddl-rank", std::to_string(through_script)});
    }
    job.command = std::move(argv);
    job.command_is_shell = false;
  };
}

JobEdit ensure_framework(Framework framework) {
  return [framework](JobSpec& job) {
    if (std::ranges::find(job.frameworks, framework) == job.frameworks.end()) {
      job.frameworks.push_back(framework);
    }
  };
}

PlanEdit whole_env_here() {
  return [](JobSpec& job, const PlanView& view) -> Result<void> {
    if (view.ranks_here && std::ranges::find(job.env_pass, "*") == job.env_pass.end()) {
      job.env_pass.emplace_back("*");
    }
    return {};
  };
}

namespace {

std::string host_names(const Plan& plan) {
  std::string names;
  for (const Host& host : plan.hosts) {
    names += (names.empty() ? "" : ", ") + host.name;
  }
  return names;
}

} // namespace

PlanEdit at_least_hosts(int least, std::string shown) {
  return [least, shown](JobSpec&, const PlanView& view) -> Result<void> {
    const std::size_t have = view.plan.hosts.size();
    if (have >= static_cast<std::size_t>(least)) {
      return {};
    }
    return fail(ExitCode::usage,
                fmt::format("{}: the job has {} host{} ({}); ddl starts every node itself, so name them all: "
                            "-H node1,node2 or --hostfile FILE",
                            shown, have, have == 1 ? "" : "s", host_names(view.plan)));
  };
}

PlanEdit rank0_host_is(std::string host, std::string shown) {
  return [host, shown](JobSpec&, const PlanView& view) -> Result<void> {
    const Host& first = view.plan.hosts.front();
    if (host == first.name || host == first.address || net::is_this_machine(host)) {
      return {};
    }
    return fail(ExitCode::usage,
                fmt::format("{}: ddl puts rank 0 on the job's first host ({}) and sets MASTER_ADDR to it, and runs "
                            "the rendezvous itself on this machine; list {} first in -H (or the hostfile), or drop {}",
                            shown, first.name, host, shown.substr(0, shown.find(' '))));
  };
}

std::pair<std::string, std::string> host_and_port(std::string_view endpoint) {
  if (endpoint.starts_with('[')) {
    const std::size_t close = endpoint.find(']');
    if (close != std::string_view::npos) {
      std::string_view rest = endpoint.substr(close + 1);
      return {std::string(endpoint.substr(1, close - 1)),
              rest.starts_with(':') ? std::string(rest.substr(1)) : std::string()};
    }
  }
  const std::size_t colon = endpoint.rfind(':');
  if (colon == std::string_view::npos || endpoint.find(':') != colon) {
    return {std::string(endpoint), ""};  // no port, or a bare IPv6 address
  }
  return {std::string(endpoint.substr(0, colon)), std::string(endpoint.substr(colon + 1))};
}

namespace {

std::string option_row(const Option& option) {
  std::string names;
  for (std::string_view name : option.names) {
    names += (names.empty() ? "" : ",") + std::string(name);
  }
  std::string head = fmt::format("  {}{}{}", names, option.value_name.empty() ? "" : " ", option.value_name);
  if (head.size() < 40) {
    return fmt::format("{:<40}{}\n", head, option.help);
  }
  return fmt::format("{}\n{:<40}{}\n", head, "", option.help);
}

} // namespace

std::string help_text(const HelpText& text, std::span<const Option> table) {
  std::string peer;
  std::string own;
  for (const Option& option : table) {
    (option.id >= static_cast<int>(DdlOption::job) ? own : peer) += option_row(option);
  }
  return fmt::format("{}\nUsage: ddl {} {}\n\n{}:\n{}\nddl's own options:\n{}\nExamples:\n{}", text.summary,
                     text.command, text.usage, text.peer, peer, own, text.examples);
}

} // namespace ddl::persona
