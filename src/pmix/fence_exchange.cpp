// SPDX-License-Identifier: MIT
#include "src/pmix/fence_exchange.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "src/util/signals.hpp"

namespace ddl::pmix {

struct FenceExchange::State {
  Allgather allgather;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::pair<std::string, FenceDone>> queue;
  bool stopping = false;
  bool busy = false;
  std::thread thread;
};

namespace {

Result<std::string> gather_all(const Allgather& allgather, const std::string& mine) {
  if (!allgather) {
    return mine;
  }
  auto all = allgather(mine);
  if (!all) {
    return fail(all.error());
  }
  std::string joined;
  for (const auto& part : *all) {
    joined += part;
  }
  return joined;
}

void serve(const std::shared_ptr<FenceExchange::State>& state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    state->wake.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
    if (state->stopping) {
      return;
    }
    auto [mine, done] = std::move(state->queue.front());
    state->queue.pop_front();
    state->busy = true;
    lock.unlock();
    done(gather_all(state->allgather, mine));
    lock.lock();
    state->busy = false;
  }
}

} // namespace

FenceExchange::FenceExchange(Allgather allgather) : state_(std::make_shared<State>()) {
  state_->allgather = std::move(allgather);
  state_->thread = thread_without_signals([state = state_] { serve(state); });
}

FenceExchange::~FenceExchange() {
  std::deque<std::pair<std::string, FenceDone>> dropped;
  bool busy = false;
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    busy = state_->busy;
    dropped.swap(state_->queue);
  }
  state_->wake.notify_all();
  for (auto& [mine, done] : dropped) {
    done(fail(ExitCode::launch, "the PMIx host stopped before this fence was exchanged"));
  }
  if (busy) {
    state_->thread.detach();
  } else {
    state_->thread.join();
  }
}

void FenceExchange::submit(std::string contribution, FenceDone done) {
  {
    std::lock_guard lock(state_->mutex);
    state_->queue.emplace_back(std::move(contribution), std::move(done));
  }
  state_->wake.notify_one();
}

} // namespace ddl::pmix
