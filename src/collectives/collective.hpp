// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "src/collectives/types.hpp"
#include "src/util/error.hpp"

namespace ddl::coll {

// Shares one string per rank with every rank: returns all of them in rank
// order. In a job this is the rendezvous' allgather; tests use a fake.
using Allgather = std::function<Result<std::vector<std::string>>(const std::string& mine)>;

// Memory a transport reduces in: host memory for tcp and mpi, GPU memory for
// nccl. Freed by the transport that allocated it.
using Buffer = std::unique_ptr<void, std::function<void(void*)>>;

// One allreduce transport (tcp ring, nccl, mpi) joined to a group of ranks.
class Collective {
public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // "tcp", "nccl" or "mpi".
  virtual std::string name() const = 0;
  // Facts for the benchmark's preamble ("streams 2, segment 256 KiB", GPU...).
  virtual std::vector<std::string> facts() const = 0;
  // For the "# Using devices" lines: GPU index and PCI bus id, or -1 and "cpu".
  virtual int device() const { return -1; }
  virtual std::string device_bus() const { return "cpu"; }

  virtual Result<Buffer> allocate(std::size_t bytes) = 0;
  virtual Result<void> upload(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual Result<void> download(void* host_dst, const void* src, std::size_t bytes) = 0;

  // recv == send means in place. Every rank calls it with the same count,
  // type and op. For asynchronous transports it may return before the data
  // is there; synchronize() waits.
  virtual Result<void> allreduce(const void* send, void* recv, std::size_t count,
                                 DataType type, ReduceOp op) = 0;
  virtual Result<void> synchronize() = 0;

  // Runs op(0..iters-1) back to back and returns the seconds until all of
  // them completed (the nccl transport measures with CUDA events).
  virtual Result<double> time_ops(int iters, const std::function<Result<void>(int)>& op);

  // Element-wise sum of `values` over all ranks, in place, on the host.
  // Also serves as a barrier.
  virtual Result<void> host_sum(std::span<double> values) = 0;
};

// A transport whose buffers live in host memory (tcp, mpi).
class HostCollective : public Collective {
public:
  Result<Buffer> allocate(std::size_t bytes) override;
  Result<void> upload(void* dst, const void* host_src, std::size_t bytes) override;
  Result<void> download(void* host_dst, const void* src, std::size_t bytes) override;
  Result<void> synchronize() override { return {}; }
  Result<void> host_sum(std::span<double> values) override;
};

} // namespace ddl::coll
