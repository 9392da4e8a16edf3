// SPDX-License-Identifier: MIT
// The [sweep] section of a job file (`ddl sweep`): how trials are made from
// parameters, how many run at once, and what they report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ddl {

// One value a parameter takes, as TOML typed it.
using ParamValue = std::variant<long long, double, std::string, bool>;

// "0.001", "32", "adam", "true": the value as the command and env get it
// (floating point in its shortest round-trip form).
std::string param_text(const ParamValue& value);

enum class SweepMethod { grid, random, list };
enum class RangeScale { linear, log };

// { min, max, scale, type }: sampled by method = "random".
struct ParamRange {
  double min = 0;
  double max = 0;
  RangeScale scale = RangeScale::linear;
  bool integer = false;  // type = "int": whole numbers from min to max
};

struct SweepParameter {
  std::string name;                // as written; env DDL_PARAM_<NAME upper-cased>
  std::vector<ParamValue> values;  // a list (grid, list; categorical for random)
  std::optional<ParamRange> range; // a range (random only)
};

struct SweepMetric {
  std::string name;
  bool maximize = false;  // goal = "max"
};

struct SweepSection {
  SweepMethod method = SweepMethod::grid;
  int samples = 0;              // random: how many trials
  std::uint64_t seed = 1;       // random
  int max_parallel = 0;         // 0: as many as the free slots allow
  std::optional<int> np;        // ranks per trial; nullopt: [launch] np, else 1
  int retries = 1;              // more attempts of a failed trial, on another host where possible
  std::optional<SweepMetric> metric;
  std::vector<SweepParameter> parameters;  // in file order
};

// The most trials one sweep may have.
inline constexpr long long k_max_sweep_trials = 100'000;

// DDL_PARAM_ and the name upper-cased ("learning_rate" -> LEARNING_RATE).
std::string param_env_name(const std::string& name);

} // namespace ddl
