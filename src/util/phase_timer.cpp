// SPDX-License-Identifier: MIT
#include "src/util/phase_timer.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

namespace ddl {

PhaseTimer::PhaseTimer(std::string name) : name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}

void PhaseTimer::end() {
  if (ended_) {
    return;
  }
  ended_ = true;
  spdlog::info("phase {}: {}", name_, phase_time_text(std::chrono::steady_clock::now() - start_));
}

std::string phase_time_text(std::chrono::steady_clock::duration took) {
  const double ms = std::chrono::duration<double, std::milli>(took).count();
  return ms < 1000.0 ? fmt::format("{:.1f}ms", ms) : fmt::format("{:.2f}s", ms / 1000.0);
}

} // namespace ddl
