// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace ddl {

// Calls task(i) for i in [0, count) on at most `fanout` threads at once.
template <typename Task> void for_each_parallel(std::size_t count, int fanout, const Task& task) {
  std::size_t workers = std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, fanout)));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      task(i);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) {
    threads.emplace_back(work);
  }
  if (workers > 0) {
    work();
  }
  for (auto& thread : threads) {
    thread.join();
  }
}

} // namespace ddl
