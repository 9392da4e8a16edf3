// SPDX-License-Identifier: MIT
// The mpi transport: MPI_Allreduce over MPI_COMM_WORLD of workers that
// mpirun started (the mpirun backend).
// The C API only: skip the deprecated C++ bindings (they need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <array>
#include <cstdint>

#include <fmt/core.h>

#include "src/collectives/transports.hpp"

namespace ddl::coll {

namespace {

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
  case DataType::float32: return MPI_FLOAT;
  case DataType::float64: return MPI_DOUBLE;
  case DataType::int32: return MPI_INT32_T;
  default: return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
  case ReduceOp::sum: return MPI_SUM;
  case ReduceOp::prod: return MPI_PROD;
  case ReduceOp::min: return MPI_MIN;
  case ReduceOp::max: return MPI_MAX;
  }
  return MPI_SUM;
}

class MpiCollective final : public HostCollective {
public:
  MpiCollective() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &world_);
  }
  ~MpiCollective() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) {
      MPI_Finalize();
    }
  }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string name() const override { return "mpi"; }
  std::vector<std::string> facts() const override {
    std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> version{};
    int length = 0;
    MPI_Get_library_version(version.data(), &length);
    std::string text(version.data(), static_cast<std::size_t>(length));
    // Open MPI counts the terminating NUL in `length`; keep the first line only.
    if (auto newline = text.find_first_of(std::string_view("\n\0", 2)); newline != std::string::npos) {
      text.resize(newline);
    }
    return {"MPI_Allreduce, " + text};
  }
  Result<void> allreduce(const void* send, void* recv, std::size_t count, DataType type,
                         ReduceOp op) override {
    MPI_Datatype datatype = mpi_type(type);
    if (datatype == MPI_DATATYPE_NULL) {
      return fail(ExitCode::usage, fmt::format("the mpi transport has no datatype {}; use "
                                               "float, double or int32",
                                               to_string(type)));
    }
    if (count > static_cast<std::size_t>(INT32_MAX)) {
      return fail(ExitCode::usage, "the mpi transport takes at most 2^31-1 elements");
    }
    const void* from = send == recv ? MPI_IN_PLACE : send;
    int rc = MPI_Allreduce(from, recv, static_cast<int>(count), datatype, mpi_op(op),
                           MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
      return fail(ExitCode::launch, fmt::format("rank {}: MPI_Allreduce failed ({})", rank_, rc));
    }
    return {};
  }

private:
  int rank_ = 0;
  int world_ = 1;
};

} // namespace

Result<std::unique_ptr<Collective>> connect_mpi() {
  if (!started_under_mpirun()) {
    return fail(ExitCode::launch,
                "the mpi transport needs workers started by mpirun (--backend mpirun): "
                "OMPI_COMM_WORLD_RANK is not set; use --transport tcp");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
      return fail(ExitCode::launch, "MPI_Init failed");
    }
  }
  return std::unique_ptr<Collective>(std::make_unique<MpiCollective>());
}

} // namespace ddl::coll
