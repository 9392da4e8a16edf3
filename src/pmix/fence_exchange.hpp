// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/pmix/server.hpp"
#include "src/util/error.hpp"

namespace ddl::pmix {

// Every host's value, indexed by host: one collective call across the
// job's hosts (the job rendezvous' allgather). Blocking.
using Allgather = std::function<Result<std::vector<std::string>>(const std::string& mine)>;

// Carries the PMIx server's fences across hosts: each contribution goes
// through `allgather` on a thread of its own, one fence at a time in the
// order PMIx asked (every host sees its fences in the same order), and the
// hosts' data, concatenated in host order, goes back through the fence's
// FenceDone. Without `allgather` (a job of one host) a fence gets back its
// own contribution.
class FenceExchange {
public:
  explicit FenceExchange(Allgather allgather);
  // Fences still queued get an error. A fence in flight cannot be cut short
  // (the allgather blocks): its thread is left to finish or die with the
  // process, owning what it uses.
  ~FenceExchange();
  FenceExchange(const FenceExchange&) = delete;
  FenceExchange& operator=(const FenceExchange&) = delete;

  // Queues one fence; returns at once (safe on PMIx's thread).
  void submit(std::string contribution, FenceDone done);

  struct State;  // internal

private:
  std::shared_ptr<State> state_;
};

} // namespace ddl::pmix
