// SPDX-License-Identifier: MIT
// `ddl pin CPUS -- PROGRAM [ARGS...]`: hidden; runs PROGRAM pinned to CPUS
// ("0-3,8"). What a remote host runs for a rank of [launch] bind, where no
// ddl forks the rank itself (the ssh backend's shim starts it).
#include <cerrno>
#include <cstring>
#include <memory>

#include <unistd.h>

#include <fmt/core.h>

#include "cmd/command.hpp"
#include "src/util/topology.hpp"

namespace ddl::cmd {

namespace {

int run_pinned(const std::string& cpus_text, const std::vector<std::string>& argv) {
  auto cpus = parse_cpu_list(cpus_text);
  if (!cpus || cpus->empty()) {
    return report(Error{ExitCode::usage, fmt::format("pin: {} is not a CPU list such as 0-3,8", cpus_text)});
  }
  if (argv.empty()) {
    return report(Error{ExitCode::usage, "pin: no program after --"});
  }
  if (auto pinned = pin_to_cpus(*cpus); !pinned) {
    return report(pinned.error());
  }
  std::vector<char*> words;
  for (const std::string& word : argv) {
    words.push_back(const_cast<char*>(word.c_str()));
  }
  words.push_back(nullptr);
  ::execvp(words[0], words.data());
  const int error = errno;
  fmt::print(stderr, "ddl: cannot execute {}: {}\n", argv[0], std::strerror(error));
  return error == ENOENT ? 127 : 126;  // the shell's codes for not found and not executable
}

} // namespace

void add_pin(CLI::App& app, Command& selected) {
  CLI::App* sub = app.add_subcommand("pin", "");
  sub->group("");  // hidden: used by ddl itself
  auto cpus = std::make_shared<std::string>();
  sub->add_option("cpus", *cpus, "CPU list")->required();
  sub->callback([&selected, cpus] {
    selected = [cpus] { return run_pinned(*cpus, trailing_command()); };
  });
}

} // namespace ddl::cmd
