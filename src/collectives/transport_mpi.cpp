// SPDX-License-Identifier: MIT
// The mpi transport: MPI_Allreduce over MPI_COMM_WORLD of workers that
// mpirun started (the mpirun backend). Open MPI's libmpi is opened with
// dlopen when the transport is first used, so one ddl binary runs on hosts
// without MPI; only mpi.h is needed to build. Its predefined handles
// (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are addresses of libmpi's
// globals, so they are looked up by name too.
// The C API only: skip the deprecated C++ bindings (they need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

#include <fmt/core.h>

#include "src/collectives/transports.hpp"
#include "src/util/shared_library.hpp"

namespace ddl::coll {

#ifndef OPEN_MPI
#error "the mpi transport is written for Open MPI's ABI (libmpi.so.40)"
#endif

namespace {

// The entry points and predefined handles ddl uses, resolved once.
struct MpiApi {
  decltype(&::MPI_Initialized) initialized = nullptr;
  decltype(&::MPI_Init_thread) init_thread = nullptr;
  decltype(&::MPI_Finalized) finalized = nullptr;
  decltype(&::MPI_Finalize) finalize = nullptr;
  decltype(&::MPI_Comm_rank) comm_rank = nullptr;
  decltype(&::MPI_Comm_size) comm_size = nullptr;
  decltype(&::MPI_Get_library_version) library_version = nullptr;
  decltype(&::MPI_Allreduce) allreduce = nullptr;
  MPI_Comm world = nullptr;
  MPI_Datatype float32 = nullptr, float64 = nullptr, int32 = nullptr;
  MPI_Op sum = nullptr, prod = nullptr, min = nullptr, max = nullptr;
  std::string error;  // why loading failed; empty when all is there
};

MpiApi load_api() {
  MpiApi api;
  std::string tried;
  void* lib = open_first({"libmpi.so.40", "libmpi.so"}, tried);
  if (lib == nullptr) {
    api.error = "Open MPI's library is not installed on this host (tried " + tried + ")";
    return api;
  }
  std::string& e = api.error;
  bind(lib, "MPI_Initialized", api.initialized, e);
  bind(lib, "MPI_Init_thread", api.init_thread, e);
  bind(lib, "MPI_Finalized", api.finalized, e);
  bind(lib, "MPI_Finalize", api.finalize, e);
  bind(lib, "MPI_Comm_rank", api.comm_rank, e);
  bind(lib, "MPI_Comm_size", api.comm_size, e);
  bind(lib, "MPI_Get_library_version", api.library_version, e);
  bind(lib, "MPI_Allreduce", api.allreduce, e);
  bind(lib, "ompi_mpi_comm_world", api.world, e);
  bind(lib, "ompi_mpi_float", api.float32, e);
  bind(lib, "ompi_mpi_double", api.float64, e);
  bind(lib, "ompi_mpi_int32_t", api.int32, e);
  bind(lib, "ompi_mpi_op_sum", api.sum, e);
  bind(lib, "ompi_mpi_op_prod", api.prod, e);
  bind(lib, "ompi_mpi_op_min", api.min, e);
  bind(lib, "ompi_mpi_op_max", api.max, e);
  return api;
}

const MpiApi& mpi() {
  static std::once_flag once;
  static MpiApi api;
  std::call_once(once, [] { api = load_api(); });
  return api;
}

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
  case DataType::float32: return mpi().float32;
  case DataType::float64: return mpi().float64;
  case DataType::int32: return mpi().int32;
  default: return nullptr;
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
  case ReduceOp::sum: return mpi().sum;
  case ReduceOp::prod: return mpi().prod;
  case ReduceOp::min: return mpi().min;
  case ReduceOp::max: return mpi().max;
  }
  return mpi().sum;
}

class MpiCollective final : public HostCollective {
public:
  MpiCollective() {
    mpi().comm_rank(mpi().world, &rank_);
    mpi().comm_size(mpi().world, &world_);
  }
  ~MpiCollective() override {
    int finalized = 0;
    mpi().finalized(&finalized);
    if (finalized == 0) {
      mpi().finalize();
    }
  }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string name() const override { return "mpi"; }
  std::vector<std::string> facts() const override {
    std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> version{};
    int length = 0;
    mpi().library_version(version.data(), &length);
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
    if (datatype == nullptr) {
      return fail(ExitCode::usage, fmt::format("the mpi transport has no datatype {}; use "
                                               "float, double or int32",
                                               to_string(type)));
    }
    if (count > static_cast<std::size_t>(INT32_MAX)) {
      return fail(ExitCode::usage, "the mpi transport takes at most 2^31-1 elements");
    }
    const void* from = send == recv ? MPI_IN_PLACE : send;
    int rc = mpi().allreduce(from, recv, static_cast<int>(count), datatype, mpi_op(op),
                             mpi().world);
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
  if (!mpi().error.empty()) {
    return fail(ExitCode::launch, "the mpi transport is not available: " + mpi().error +
                                      "; use --transport tcp");
  }
  int initialized = 0;
  mpi().initialized(&initialized);
  if (initialized == 0) {
    int provided = 0;
    if (mpi().init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
      return fail(ExitCode::launch, "MPI_Init failed");
    }
  }
  return std::unique_ptr<Collective>(std::make_unique<MpiCollective>());
}

} // namespace ddl::coll
