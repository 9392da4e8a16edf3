// SPDX-License-Identifier: MIT
// The nccl transport. libcudart and libnccl are opened with dlopen, so one
// ddl binary runs on hosts without CUDA; only their headers are needed to build.
#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <mutex>

#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <nccl.h>

#include "src/collectives/transports.hpp"
#include "src/util/shared_library.hpp"

namespace ddl::coll {

namespace {

// The entry points ddl uses, resolved once.
struct CudaApi {
  decltype(&::cudaGetDeviceCount) get_device_count = nullptr;
  decltype(&::cudaSetDevice) set_device = nullptr;
  cudaError_t (*malloc)(void**, std::size_t) = nullptr;
  decltype(&::cudaFree) free = nullptr;
  decltype(&::cudaMemcpy) memcpy = nullptr;
  decltype(&::cudaStreamCreate) stream_create = nullptr;
  decltype(&::cudaStreamDestroy) stream_destroy = nullptr;
  decltype(&::cudaStreamSynchronize) stream_synchronize = nullptr;
  cudaError_t (*event_create)(cudaEvent_t*) = nullptr;
  decltype(&::cudaEventDestroy) event_destroy = nullptr;
  decltype(&::cudaEventRecord) event_record = nullptr;
  decltype(&::cudaEventSynchronize) event_synchronize = nullptr;
  decltype(&::cudaEventElapsedTime) event_elapsed = nullptr;
  decltype(&::cudaGetErrorString) error_string = nullptr;
  decltype(&::cudaDeviceGetPCIBusId) pci_bus_id = nullptr;
  decltype(&::ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&::ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&::ncclCommDestroy) comm_destroy = nullptr;
  decltype(&::ncclAllReduce) all_reduce = nullptr;
  decltype(&::ncclGetErrorString) nccl_error_string = nullptr;
  decltype(&::ncclGetVersion) get_version = nullptr;
  std::string error;  // why loading failed; empty when all is there
};

CudaApi load_api() {
  CudaApi api;
  std::string tried;
  void* cudart = open_first({"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                             "libcudart.so.11.0"},
                            tried);
  if (cudart == nullptr) {
    api.error = "no CUDA runtime library found (tried " + tried + ")";
    return api;
  }
  tried.clear();
  void* nccl = open_first({"libnccl.so.2", "libnccl.so"}, tried);
  if (nccl == nullptr) {
    api.error = "no NCCL library found (tried " + tried + ")";
    return api;
  }
  std::string& e = api.error;
  bind(cudart, "cudaGetDeviceCount", api.get_device_count, e);
  bind(cudart, "cudaSetDevice", api.set_device, e);
  bind(cudart, "cudaMalloc", api.malloc, e);
  bind(cudart, "cudaFree", api.free, e);
  bind(cudart, "cudaMemcpy", api.memcpy, e);
  bind(cudart, "cudaStreamCreate", api.stream_create, e);
  bind(cudart, "cudaStreamDestroy", api.stream_destroy, e);
  bind(cudart, "cudaStreamSynchronize", api.stream_synchronize, e);
  bind(cudart, "cudaEventCreate", api.event_create, e);
  bind(cudart, "cudaEventDestroy", api.event_destroy, e);
  bind(cudart, "cudaEventRecord", api.event_record, e);
  bind(cudart, "cudaEventSynchronize", api.event_synchronize, e);
  bind(cudart, "cudaEventElapsedTime", api.event_elapsed, e);
  bind(cudart, "cudaGetErrorString", api.error_string, e);
  bind(cudart, "cudaDeviceGetPCIBusId", api.pci_bus_id, e);
  bind(nccl, "ncclGetUniqueId", api.get_unique_id, e);
  bind(nccl, "ncclCommInitRank", api.comm_init_rank, e);
  bind(nccl, "ncclCommDestroy", api.comm_destroy, e);
  bind(nccl, "ncclAllReduce", api.all_reduce, e);
  bind(nccl, "ncclGetErrorString", api.nccl_error_string, e);
  bind(nccl, "ncclGetVersion", api.get_version, e);
  return api;
}

const CudaApi& api() {
  static const CudaApi loaded = load_api();
  return loaded;
}

Unexpected unavailable(const std::string& why) {
  return fail(ExitCode::launch, std::string(k_nccl_unavailable) + why + "; use --transport tcp");
}

// The device this rank drives: the only visible one (CUDA_VISIBLE_DEVICES
// bound by ddl), else the local rank's.
Result<int> pick_device(int local_rank) {
  const CudaApi& a = api();
  if (!a.error.empty()) {
    return unavailable(a.error);
  }
  int count = 0;
  if (cudaError_t rc = a.get_device_count(&count); rc != cudaSuccess) {
    return unavailable(fmt::format("no GPU visible (cudaGetDeviceCount: {})", a.error_string(rc)));
  }
  if (count == 0) {
    return unavailable("no GPU visible");
  }
  if (count == 1) {
    return 0;
  }
  if (local_rank >= count) {
    return unavailable(fmt::format("local rank {} has no GPU: only {} visible", local_rank, count));
  }
  return local_rank;
}

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
  case DataType::float32: return ncclFloat32;
  case DataType::float64: return ncclFloat64;
  case DataType::int32: return ncclInt32;
  case DataType::float16: return ncclFloat16;
  case DataType::bfloat16: return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
  case ReduceOp::sum: return ncclSum;
  case ReduceOp::prod: return ncclProd;
  case ReduceOp::min: return ncclMin;
  case ReduceOp::max: return ncclMax;
  }
  return ncclSum;
}

class NcclCollective final : public Collective {
public:
  NcclCollective(int rank, int world, int device) : rank_(rank), world_(world), device_(device) {}
  ~NcclCollective() override;
  Result<void> init(const Allgather& exchange);

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string name() const override { return "nccl"; }
  std::vector<std::string> facts() const override;
  int device() const override { return device_; }
  std::string device_bus() const override {
    std::array<char, 32> bus{};
    api().pci_bus_id(bus.data(), static_cast<int>(bus.size()), device_);
    return bus.data();
  }
  Result<Buffer> allocate(std::size_t bytes) override;
  Result<void> upload(void* dst, const void* host_src, std::size_t bytes) override;
  Result<void> download(void* host_dst, const void* src, std::size_t bytes) override;
  Result<void> allreduce(const void* send, void* recv, std::size_t count, DataType type,
                         ReduceOp op) override;
  Result<void> synchronize() override;
  Result<double> time_ops(int iters, const std::function<Result<void>(int)>& op) override;
  Result<void> host_sum(std::span<double> values) override;

private:
  Result<void> cuda(cudaError_t rc, const char* what) const {
    if (rc == cudaSuccess) {
      return {};
    }
    return fail(ExitCode::launch, fmt::format("rank {}: {}: {}", rank_, what, api().error_string(rc)));
  }
  Result<void> nccl(ncclResult_t rc, const char* what) const {
    if (rc == ncclSuccess) {
      return {};
    }
    return fail(ExitCode::launch,
                fmt::format("rank {}: {}: {}", rank_, what, api().nccl_error_string(rc)));
  }

  int rank_;
  int world_;
  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  Buffer scratch_;
};

NcclCollective::~NcclCollective() {
  scratch_.reset();
  if (comm_ != nullptr) {
    api().comm_destroy(comm_);
  }
  if (stream_ != nullptr) {
    api().stream_destroy(stream_);
  }
}

std::string to_hex(const char* data, std::size_t size) {
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    out += fmt::format("{:02x}", static_cast<unsigned char>(data[i]));
  }
  return out;
}

bool from_hex(const std::string& text, char* out, std::size_t size) {
  if (text.size() != 2 * size) {
    return false;
  }
  for (std::size_t i = 0; i < size; ++i) {
    out[i] = static_cast<char>(std::strtoul(text.substr(2 * i, 2).c_str(), nullptr, 16));
  }
  return true;
}

Result<void> NcclCollective::init(const Allgather& exchange) {
  const CudaApi& a = api();
  if (auto ok = cuda(a.set_device(device_), "cudaSetDevice"); !ok) {
    return ok;
  }
  ncclUniqueId id{};
  std::string mine;
  if (rank_ == 0) {
    if (auto ok = nccl(a.get_unique_id(&id), "ncclGetUniqueId"); !ok) {
      return ok;
    }
    mine = to_hex(id.internal, sizeof id.internal);
  }
  auto all = exchange(mine);
  if (!all) {
    return fail(all.error());
  }
  if (all->empty() || !from_hex(all->front(), id.internal, sizeof id.internal)) {
    return fail(ExitCode::launch, "malformed NCCL unique id from rank 0");
  }
  if (auto ok = cuda(a.stream_create(&stream_), "cudaStreamCreate"); !ok) {
    return ok;
  }
  if (auto ok = nccl(a.comm_init_rank(&comm_, world_, id, rank_), "ncclCommInitRank"); !ok) {
    return ok;
  }
  auto scratch = allocate(4096);
  if (!scratch) {
    return fail(scratch.error());
  }
  scratch_ = std::move(*scratch);
  return {};
}

std::vector<std::string> NcclCollective::facts() const {
  int version = 0;
  api().get_version(&version);
  std::array<char, 32> bus{};
  api().pci_bus_id(bus.data(), static_cast<int>(bus.size()), device_);
  return {fmt::format("NCCL {} (headers {}), device {} [{}], CUDA-event timing", version,
                      NCCL_VERSION_CODE, device_, bus.data())};
}

Result<Buffer> NcclCollective::allocate(std::size_t bytes) {
  void* ptr = nullptr;
  if (auto ok = cuda(api().malloc(&ptr, std::max<std::size_t>(bytes, 1)), "cudaMalloc"); !ok) {
    return fail(ok.error());
  }
  return Buffer(ptr, [](void* p) { api().free(p); });
}

Result<void> NcclCollective::upload(void* dst, const void* host_src, std::size_t bytes) {
  return cuda(api().memcpy(dst, host_src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
}

Result<void> NcclCollective::download(void* host_dst, const void* src, std::size_t bytes) {
  return cuda(api().memcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

Result<void> NcclCollective::allreduce(const void* send, void* recv, std::size_t count,
                                       DataType type, ReduceOp op) {
  return nccl(api().all_reduce(send, recv, count, nccl_type(type), nccl_op(op), comm_, stream_),
              "ncclAllReduce");
}

Result<void> NcclCollective::synchronize() {
  return cuda(api().stream_synchronize(stream_), "cudaStreamSynchronize");
}

Result<double> NcclCollective::time_ops(int iters, const std::function<Result<void>(int)>& op) {
  const CudaApi& a = api();
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  if (auto ok = cuda(a.event_create(&start), "cudaEventCreate"); !ok) {
    return fail(ok.error());
  }
  if (auto ok = cuda(a.event_create(&stop), "cudaEventCreate"); !ok) {
    a.event_destroy(start);
    return fail(ok.error());
  }
  auto run = [&]() -> Result<double> {
    if (auto ok = cuda(a.event_record(start, stream_), "cudaEventRecord"); !ok) {
      return fail(ok.error());
    }
    for (int i = 0; i < iters; ++i) {
      if (auto ok = op(i); !ok) {
        return fail(ok.error());
      }
    }
    if (auto ok = cuda(a.event_record(stop, stream_), "cudaEventRecord"); !ok) {
      return fail(ok.error());
    }
    if (auto ok = cuda(a.event_synchronize(stop), "cudaEventSynchronize"); !ok) {
      return fail(ok.error());
    }
    float millis = 0;
    if (auto ok = cuda(a.event_elapsed(&millis, start, stop), "cudaEventElapsedTime"); !ok) {
      return fail(ok.error());
    }
    return static_cast<double>(millis) / 1e3;
  };
  auto seconds = run();
  a.event_destroy(start);
  a.event_destroy(stop);
  return seconds;
}

Result<void> NcclCollective::host_sum(std::span<double> values) {
  std::size_t bytes = values.size() * sizeof(double);
  if (bytes > 4096) {
    return fail(ExitCode::launch, "host_sum: too many values");
  }
  if (auto ok = upload(scratch_.get(), values.data(), bytes); !ok) {
    return ok;
  }
  if (auto ok = allreduce(scratch_.get(), scratch_.get(), values.size(), DataType::float64,
                          ReduceOp::sum);
      !ok) {
    return ok;
  }
  if (auto ok = synchronize(); !ok) {
    return ok;
  }
  return download(values.data(), scratch_.get(), bytes);
}

} // namespace

bool nccl_usable(int local_rank, std::string* why) {
  auto device = pick_device(local_rank);
  if (!device && why != nullptr) {
    *why = device.error().message.substr(std::string(k_nccl_unavailable).size());
  }
  return device.has_value();
}

Result<std::unique_ptr<Collective>> connect_nccl(int rank, int world, int local_rank,
                                                 const Allgather& exchange) {
  auto device = pick_device(local_rank);
  if (!device) {
    return fail(device.error());
  }
  auto collective = std::make_unique<NcclCollective>(rank, world, *device);
  if (auto ok = collective->init(exchange); !ok) {
    return fail(ok.error());
  }
  return std::unique_ptr<Collective>(std::move(collective));
}

} // namespace ddl::coll
