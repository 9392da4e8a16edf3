// SPDX-License-Identifier: MIT
// [preflight]: a short network check among the job's own hosts before its
// ranks start, with thresholds relative to the job's own median (issue 43).
#pragma once

#include <optional>

#include "src/util/duration.hpp"

namespace ddl {

// What the gate does with a host or link below the thresholds: leave the host
// out as a lost host is ("exclude", the default for an elastic job), stop
// with exit 3 naming it and the figures ("stop", the default otherwise), or
// launch anyway with a warning ("warn").
enum class PreflightOnFail { exclude, stop, warn };

struct PreflightSection {
  bool enabled = false;               // enabled = true, or --preflight (--no-preflight: off)
  bool enabled_said = false;          // enabled given in the file or on the command line
  bool in_file = false;               // the job file has [preflight]
  bool network = true;                // the network test among the hosts
  double min_fraction = 0.5;          // of the median bandwidth
  double max_latency_factor = 4.0;    // times the median latency
  Millis budget{5'000};               // the whole check, bounded
  std::optional<PreflightOnFail> on_fail;  // unset: exclude where np is a range, else stop
};

// The choice the gate applies: on_fail, else its default for an elastic job or not.
PreflightOnFail preflight_on_fail(const PreflightSection& preflight, bool elastic_np);

} // namespace ddl
