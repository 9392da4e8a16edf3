// SPDX-License-Identifier: MIT
#include "backends/host_check_probe.hpp"

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl {

namespace {

constexpr std::string_view k_version_script =
    "if command -v \"$1\" >/dev/null 2>&1; then\n"
    "  v=$(\"$1\" --version 2>/dev/null | head -n 1); echo \"ddl_version=${v#ddl }\"\n"
    "else echo ddl_missing=1; fi\n";

constexpr std::string_view k_gpu_count_script =
    "n=0\n"
    "if command -v nvidia-smi >/dev/null 2>&1; then n=$(nvidia-smi -L 2>/dev/null | grep -c \"^GPU \"); fi\n"
    "if [ \"${n:-0}\" = 0 ] && [ -d /proc/driver/nvidia/gpus ]; then\n"
    "  n=$(ls /proc/driver/nvidia/gpus | wc -l); fi\n"
    "echo \"gpu_count=$n\"\n";

} // namespace

std::string host_check_script() { return std::string(k_version_script) + std::string(k_gpu_count_script); }

std::string_view gpu_count_script() { return k_gpu_count_script; }

std::optional<int> gpu_count_in(std::string_view line) {
  if (!line.starts_with("gpu_count=")) {
    return std::nullopt;
  }
  auto count = parse_int(trim(line.substr(10)));
  return count ? std::optional<int>(static_cast<int>(*count)) : std::nullopt;
}

HostCheck read_host_check(std::string_view out, int status, const std::string& ddl_path) {
  HostCheck check;
  bool missing = false;
  for (const auto& raw : split(out, '\n')) {
    std::string_view line = trim(raw);
    if (line.starts_with("ddl_version=")) {
      check.ddl_version = std::string(trim(line.substr(12)));
    } else if (line.starts_with("ddl_missing=")) {
      missing = true;
    } else if (auto count = gpu_count_in(line)) {
      check.gpu_count = count;
    }
  }
  if (status != 0) {
    check.error = fmt::format("the probe failed (exit {}): {}", status, trim(out));
  } else if (missing) {
    check.error = fmt::format("ddl not found at {}", ddl_path);
  }
  return check;
}

} // namespace ddl
