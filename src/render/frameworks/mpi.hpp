// SPDX-License-Identifier: MIT
#pragma once

// MPI's rules: the Open MPI and PMI variables of each rank, which programs
// are MPI programs, and the singleton guard (the backend that makes the
// ranks one MPI world, mpirun, is chosen in backends/registry).

#include <optional>
#include <string>
#include <string_view>

#include "src/job/job.hpp"
#include "src/render/render_env.hpp"

namespace ddl {

// OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE, PMI_RANK, PMI_SIZE.
void add_mpi_env(EnvList& env, const RankView& r);

// A program that links an MPI library: its path and the library's name.
struct MpiProgram {
  std::string path;
  std::string library;  // "libmpi.so.40"
};

// The job's program (its first command word; of a shell string, the first
// word after NAME=VALUE words) as the launcher finds it (PATH, or relative to
// the job's workdir) when it is an ELF file whose DT_NEEDED entries name an
// MPI library (libmpi.so*, libmpi_*, libmpich*, libmpicxx*, libmpifort*:
// Open MPI, MPICH, Intel MPI, MVAPICH); nullopt otherwise.
std::optional<MpiProgram> mpi_program(const JobSpec& job);

// True for the names of MPI's libraries above ("libmpich.so.12").
bool is_mpi_library(std::string_view soname);
// True for Open MPI's libmpi (ABI 40: Open MPI 3.0 to 5), the MPI that ddl's
// PMIx launch is proven with; not MPICH's or Intel MPI's libmpi.so.12.
bool is_open_mpi_library(std::string_view soname);

// The singleton guard: ranks started one by one, outside any MPI launcher,
// would each be an MPI world of one (MPI's "singleton" start). When more than
// one rank starts that way, every rank gets what makes that start fail
// loudly instead, unless the user sets the variable:
//   Open MPI 4.1: OMPI_MCA_ess_singleton_server=file:<a path that cannot
//     exist> (schizo/orte sets OMPI_MCA_ess=singleton over the user's value,
//     so excluding the component does not work; the singleton then fails
//     reading its server's contact file, and MPI_Init aborts).
//   MPICH (Hydra's simple PMI): PMI_PORT=127.0.0.1:0 (PMI_Init cannot connect).
inline constexpr std::string_view k_ompi_singleton_variable = "OMPI_MCA_ess_singleton_server";
inline constexpr std::string_view k_ompi_singleton_guard = "file:/dev/null/ddl-started-this-rank-without-mpirun";
inline constexpr std::string_view k_mpich_singleton_variable = "PMI_PORT";
inline constexpr std::string_view k_mpich_singleton_guard = "127.0.0.1:0";

void add_singleton_guard(EnvList& env, const JobSpec& job);

// True when `line` (a rank's stderr) is how MPI_Init refused under the guard.
bool singleton_guard_refused(std::string_view line);

// The one line that says so and what to write instead.
std::string singleton_guard_hint(int rank, int world_size);

} // namespace ddl
