// SPDX-License-Identifier: MIT
#pragma once

// The shell that `hosts --check` runs on a host, whatever reaches it (ssh,
// kubectl exec), and the check read from what it printed.

#include <optional>
#include <string>
#include <string_view>

#include "src/launch/backend.hpp"

namespace ddl {

// With the ddl binary's path as $1: prints "ddl_version=V" (its `--version`)
// or "ddl_missing=1", then gpu_count_script()'s line.
std::string host_check_script();

// Prints "gpu_count=N": nvidia-smi -L's GPUs, else /proc/driver/nvidia/gpus.
std::string_view gpu_count_script();

// The count of a "gpu_count=N" line; nullopt for any other line.
std::optional<int> gpu_count_in(std::string_view line);

// What host_check_script() printed (`out`) and how it ended (`status`, an
// exit code), on a host whose ddl is `ddl_path`: its version and GPU count,
// and an error when the script failed or ddl is missing. reachable is left
// to the caller.
HostCheck read_host_check(std::string_view out, int status, const std::string& ddl_path);

} // namespace ddl
