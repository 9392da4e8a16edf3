// SPDX-License-Identifier: MIT
#include "src/sweep/trials.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>

#include "src/util/text.hpp"

namespace ddl::sweep {

namespace {

// Uniform in [0, 1) from 53 bits: the same numbers with every standard
// library (std::uniform_real_distribution's are not specified).
double unit(std::mt19937_64& bits) { return static_cast<double>(bits() >> 11) * 0x1.0p-53; }

std::size_t below(std::mt19937_64& bits, std::size_t n) {
  return std::min(n - 1, static_cast<std::size_t>(unit(bits) * static_cast<double>(n)));
}

ParamValue draw(const ParamRange& range, std::mt19937_64& bits) {
  const double u = unit(bits);
  if (range.integer) {
    // Whole numbers min..max: a point in [min, max + 1), floored.
    const double top = range.max + 1;
    double x = range.scale == RangeScale::log
                   ? std::exp(std::log(range.min) + u * (std::log(top) - std::log(range.min)))
                   : range.min + u * (top - range.min);
    return static_cast<long long>(std::clamp(std::floor(x), range.min, range.max));
  }
  if (range.scale == RangeScale::log) {
    return std::clamp(std::exp(std::log(range.min) + u * (std::log(range.max) - std::log(range.min))), range.min,
                      range.max);
  }
  return range.min + u * (range.max - range.min);
}

std::vector<Trial> grid(const SweepSection& sweep) {
  std::vector<Trial> trials;
  std::vector<std::size_t> at(sweep.parameters.size(), 0);
  for (;;) {
    Trial trial{static_cast<int>(trials.size()), {}};
    for (std::size_t p = 0; p < at.size(); ++p) {
      trial.params.emplace_back(sweep.parameters[p].name, sweep.parameters[p].values[at[p]]);
    }
    trials.push_back(std::move(trial));
    std::size_t p = at.size();
    while (p > 0 && ++at[p - 1] == sweep.parameters[p - 1].values.size()) {
      at[--p] = 0;
    }
    if (p == 0) {
      return trials;
    }
  }
}

std::vector<Trial> listed(const SweepSection& sweep) {
  std::vector<Trial> trials;
  const std::size_t count = sweep.parameters.empty() ? 0 : sweep.parameters.front().values.size();
  for (std::size_t i = 0; i < count; ++i) {
    Trial trial{static_cast<int>(i), {}};
    for (const SweepParameter& param : sweep.parameters) {
      trial.params.emplace_back(param.name, param.values.at(i));
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

std::vector<Trial> random(const SweepSection& sweep) {
  std::mt19937_64 bits(sweep.seed);
  std::vector<Trial> trials;
  for (int i = 0; i < sweep.samples; ++i) {
    Trial trial{i, {}};
    for (const SweepParameter& param : sweep.parameters) {
      trial.params.emplace_back(param.name, param.range ? draw(*param.range, bits)
                                                        : param.values[below(bits, param.values.size())]);
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

// Numbers and plain words go into an sh string as they are (so "loss={x}"
// inside double quotes works too); anything else is quoted.
std::string for_shell(const std::string& value) {
  const bool plain = !value.empty() && std::ranges::all_of(value, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("_.,:/+=@%-").find(c) != std::string_view::npos;
  });
  return plain ? value : shell_quote(value);
}

} // namespace

std::vector<Trial> make_trials(const SweepSection& sweep) {
  switch (sweep.method) {
  case SweepMethod::grid: return grid(sweep);
  case SweepMethod::list: return listed(sweep);
  case SweepMethod::random: return random(sweep);
  }
  return {};
}

std::vector<std::string> substitute(const std::vector<std::string>& command, const Trial& trial, bool shell) {
  std::vector<std::string> out;
  for (const std::string& word : command) {
    std::string text;
    for (std::size_t at = 0; at < word.size();) {
      auto match = std::ranges::find_if(trial.params, [&](const auto& param) {
        return word.compare(at, param.first.size() + 2, "{" + param.first + "}") == 0;
      });
      if (word[at] != '{' || match == trial.params.end()) {
        text += word[at++];
        continue;
      }
      const std::string value = param_text(match->second);
      text += shell ? for_shell(value) : value;
      at += match->first.size() + 2;
    }
    out.push_back(std::move(text));
  }
  return out;
}

EnvList trial_env(const Trial& trial, const std::string& trial_dir) {
  EnvList env{{"DDL_TRIAL", std::to_string(trial.index)}, {"DDL_TRIAL_DIR", trial_dir}};
  for (const auto& [name, value] : trial.params) {
    env.emplace_back(param_env_name(name), param_text(value));
  }
  return env;
}

std::string describe(const Trial& trial) {
  std::string text;
  for (const auto& [name, value] : trial.params) {
    text += (text.empty() ? "" : " ") + name + "=" + param_text(value);
  }
  return text;
}

} // namespace ddl::sweep
