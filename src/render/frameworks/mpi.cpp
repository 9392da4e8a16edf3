// SPDX-License-Identifier: MIT
#include "src/render/frameworks/mpi.hpp"

#include <array>
#include <cstdlib>
#include <filesystem>

#include <fmt/core.h>

#include "src/util/elf_needed.hpp"
#include "src/util/env.hpp"
#include "src/util/file.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

bool is_assignment(std::string_view word) {
  const std::size_t eq = word.find('=');
  return eq != std::string_view::npos && eq > 0 && is_env_name(word.substr(0, eq));
}

// The first word of the job's command, as the launcher would run it.
std::string program_word(const JobSpec& job) {
  if (job.command.empty()) {
    return {};
  }
  if (!job.command_is_shell) {
    return job.command.front();
  }
  for (const auto& word : split(trim(job.command.front()), ' ')) {
    if (!word.empty() && !is_assignment(word)) {
      return word;
    }
  }
  return {};
}

std::optional<std::string> program_path(const JobSpec& job, const std::string& word) {
  if (word.find('/') == std::string::npos) {
    const char* path = std::getenv("PATH");
    return find_on_path(word, path != nullptr ? path : "");
  }
  if (word.front() == '/' || job.workdir.empty()) {
    return word;
  }
  return (std::filesystem::path(job.workdir) / word).string();
}

} // namespace

void add_mpi_env(EnvList& env, const RankView& r) {
  env.emplace_back("OMPI_COMM_WORLD_RANK", std::to_string(r.slot.rank));
  env.emplace_back("OMPI_COMM_WORLD_SIZE", std::to_string(r.world));
  env.emplace_back("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r.slot.local_rank));
  env.emplace_back("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(r.slot.local_size));
  env.emplace_back("PMI_RANK", std::to_string(r.slot.rank));
  env.emplace_back("PMI_SIZE", std::to_string(r.world));
}

bool is_mpi_library(std::string_view soname) {
  static constexpr std::array<std::string_view, 5> k_prefixes{"libmpi.so", "libmpi_", "libmpich", "libmpicxx",
                                                              "libmpifort"};
  for (std::string_view prefix : k_prefixes) {
    if (soname.starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

bool is_open_mpi_library(std::string_view soname) { return soname == "libmpi.so.40"; }

std::optional<MpiProgram> mpi_program(const JobSpec& job) {
  const std::string word = program_word(job);
  auto path = word.empty() ? std::nullopt : program_path(job, word);
  auto needed = path ? elf_needed(*path) : std::nullopt;
  if (!needed) {
    return std::nullopt;
  }
  for (const auto& library : *needed) {
    if (is_mpi_library(library)) {
      return MpiProgram{*path, library};
    }
  }
  return std::nullopt;
}

void add_singleton_guard(EnvList& env, const JobSpec& job) {
  for (auto [name, value] : {std::pair{k_ompi_singleton_variable, k_ompi_singleton_guard},
                             std::pair{k_mpich_singleton_variable, k_mpich_singleton_guard}}) {
    if (!user_sets_env(job, name)) {
      env.emplace_back(std::string(name), std::string(value));
    }
  }
}

bool singleton_guard_refused(std::string_view line) {
  return line.find(k_ompi_singleton_guard) != std::string_view::npos ||
         line.find("Unable to connect to 127.0.0.1 on 0") != std::string_view::npos;
}

std::string singleton_guard_hint(int rank, int world_size) {
  return fmt::format("ddl: rank {} is an MPI program that ddl started without an MPI launcher (it would have "
                     "been one of {} one-rank MPI worlds, so MPI_Init refused): write --backend mpirun, or "
                     "frameworks = [\"mpi\"] in [job]",
                     rank, world_size);
}

} // namespace ddl
