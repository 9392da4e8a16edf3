// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "src/render/frameworks/mpi.hpp"
#include "src/util/elf_needed.hpp"
#include "src/util/file.hpp"

namespace {

std::string file_bytes(const std::string& path) {
  return ddl::read_capped(path, std::size_t{64} << 20).text;
}

std::string write_temp(const std::string& bytes) {
  char name[] = "/tmp/ddl-elf-test.XXXXXX";
  int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  REQUIRE(ddl::write_fully(fd, bytes));
  ::close(fd);
  return name;
}

} // namespace

TEST_CASE("elf_needed lists a dynamic program's libraries as readelf -d does", "[elf]") {
  auto needed = ddl::elf_needed("/bin/sh");
  REQUIRE(needed.has_value());
  CHECK(std::ranges::find(*needed, "libc.so.6") != needed->end());
}

TEST_CASE("elf_needed: no ELF, cut short or garbage after the magic is nullopt, never a crash", "[elf]") {
  CHECK_FALSE(ddl::elf_needed("/no/such/file").has_value());
  CHECK_FALSE(ddl::elf_needed("/etc/hostname").has_value());
  CHECK_FALSE(ddl::elf_needed("/tmp").has_value());
  const std::string sh = file_bytes("/bin/sh");
  REQUIRE(sh.size() > 4096);
  for (std::size_t cut : {4UL, 16UL, 63UL, 200UL, 4096UL}) {
    std::string path = write_temp(sh.substr(0, cut));
    CHECK_FALSE(ddl::elf_needed(path).has_value());
    std::remove(path.c_str());
  }
  // The header intact, every byte after it 0xff: offsets and counts point nowhere.
  std::string garbled = sh.substr(0, 16) + std::string(sh.size() - 16, '\xff');
  std::string path = write_temp(garbled);
  CHECK_FALSE(ddl::elf_needed(path).has_value());
  std::remove(path.c_str());
}

TEST_CASE("MPI's libraries by soname", "[elf]") {
  for (const char* name : {"libmpi.so.40", "libmpich.so.12", "libmpi_cxx.so.40", "libmpicxx.so.12",
                           "libmpifort.so.12", "libmpi_mpifh.so.40"}) {
    CHECK(ddl::is_mpi_library(name));
  }
  for (const char* name : {"libc.so.6", "libmpfr.so.6", "libm.so.6", "libmpdec.so.3"}) {
    CHECK_FALSE(ddl::is_mpi_library(name));
  }
}

TEST_CASE("the singleton guard: both MPIs' variables, the user's own value kept", "[elf]") {
  ddl::JobSpec job;
  ddl::EnvList env;
  ddl::add_singleton_guard(env, job);
  CHECK(env == ddl::EnvList{{"OMPI_MCA_ess_singleton_server", "file:/dev/null/ddl-started-this-rank-without-mpirun"},
                            {"PMI_PORT", "127.0.0.1:0"}});
  job.env = {{"OMPI_MCA_ess_singleton_server", ""}};
  env.clear();
  ddl::add_singleton_guard(env, job);
  CHECK(env == ddl::EnvList{{"PMI_PORT", "127.0.0.1:0"}});
  // How Open MPI 4.1 and MPICH 4.0 refuse (their stderr lines).
  CHECK(ddl::singleton_guard_refused("--ompi-server file:/dev/null/ddl-started-this-rank-without-mpirun"));
  CHECK(ddl::singleton_guard_refused("[unset]: Unable to connect to 127.0.0.1 on 0"));
  CHECK_FALSE(ddl::singleton_guard_refused("It looks like MPI_INIT failed for some reason"));
}

TEST_CASE("mpi_program: the first command word, on PATH or as written; ELF only", "[elf]") {
  ddl::JobSpec job;
  job.command = {"/bin/sh", "-c", "true"};
  CHECK_FALSE(ddl::mpi_program(job).has_value());  // an ELF without MPI
  job.command = {"/etc/hostname"};
  CHECK_FALSE(ddl::mpi_program(job).has_value());
  job.command = {};
  CHECK_FALSE(ddl::mpi_program(job).has_value());
  job.command = {"A=1 no-such-program-here arg"};
  job.command_is_shell = true;
  CHECK_FALSE(ddl::mpi_program(job).has_value());
}
