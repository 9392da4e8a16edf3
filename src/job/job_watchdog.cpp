// SPDX-License-Identifier: MIT
// Reads [watchdog] and the stop keys of [job] (issue 17).
#include <fmt/core.h>

#include "src/job/job_reader.hpp"
#include "src/util/pattern.hpp"
#include "src/util/signal_names.hpp"

namespace ddl::job_detail {

namespace {

// A longer pattern is refused: what a user writes for a progress line is short.
constexpr std::size_t k_max_progress_regex = 256;

// A signal key: "SIGUSR1" or "USR1". False when absent or wrong (reported).
bool read_signal(const Section& s, std::string_view key, int& out) {
  std::string name;
  if (!s.read_string(key, name)) {
    return false;
  }
  auto signo = parse_catchable_signal(name);
  if (!signo) {
    s.diag().at(*s.node(key), fmt::format("{}: {} is not a signal a program can catch (e.g. \"SIGUSR1\")",
                                          s.label(key), quote_input(name)));
    return false;
  }
  out = *signo;
  return true;
}

void read_progress(const Section& s, WatchdogSection& watchdog) {
  std::string text;
  if (!s.read_string("progress", text)) {
    return;
  }
  if (text == "heartbeat") {
    watchdog.progress = ProgressSource::heartbeat;
    return;
  }
  if (text.empty()) {
    s.diag().at(*s.node("progress"), "watchdog.progress: must not be empty (leave it out: any output line)");
    return;
  }
  if (text.size() > k_max_progress_regex) {
    s.diag().at(*s.node("progress"),
                fmt::format("watchdog.progress: longer than {} bytes", k_max_progress_regex));
    return;
  }
  if (auto compiled = Pattern::compile(text); !compiled) {
    s.diag().at(*s.node("progress"), fmt::format("watchdog.progress: not a valid RE2 regular expression: {}",
                                                 compiled.error().message));
    return;
  }
  watchdog.progress = ProgressSource::regex;
  watchdog.progress_regex = std::move(text);
}

void read_dump(const Section& s, WatchdogSection& watchdog) {
  std::string text;
  if (!s.read_string("dump", text)) {
    return;
  }
  for (DumpTool tool : {DumpTool::automatic, DumpTool::py_spy, DumpTool::gdb}) {
    if (text == dump_tool_name(tool)) {
      watchdog.dump_tool = tool;
      return;
    }
  }
  auto signo = parse_catchable_signal(text);
  if (!signo) {
    s.diag().at(*s.node("dump"), fmt::format("watchdog.dump: {} is neither \"auto\", \"py-spy\", \"gdb\" nor a "
                                             "signal name such as \"SIGUSR1\"", quote_input(text)));
    return;
  }
  watchdog.dump_signal = *signo;
}

} // namespace

void read_stop(const Section& s, StopSection& stop) {
  read_signal(s, "stop_signal", stop.stop_signal);
  read_signal(s, "checkpoint_signal", stop.checkpoint_signal);
  s.read_duration("checkpoint_grace", stop.checkpoint_grace, false);
  if (s.node("checkpoint_grace") != nullptr && s.node("checkpoint_signal") == nullptr) {
    s.diag().at(*s.node("checkpoint_grace"), "job.checkpoint_grace: needs job.checkpoint_signal");
  }
  int code = 0;
  if (s.read_int("requeue_exit_code", code, 1, 255)) {
    stop.requeue_exit_code = code;
  }
}

void read_watchdog(const SectionInput& in) {
  const Section s = in.keys();
  WatchdogSection& watchdog = in.job.watchdog;
  Millis value{0};
  if (s.read_duration("stall", value, false)) {
    watchdog.stall = value;
  }
  if (s.read_duration("straggler", value, false)) {
    watchdog.straggler = value;
  }
  read_progress(s, watchdog);
  read_dump(s, watchdog);
  s.read_duration("dump_timeout", watchdog.dump_timeout, true);
  if (s.node("stall") == nullptr && s.node("straggler") == nullptr) {
    for (std::string_view key : {"progress", "dump", "dump_timeout"}) {
      if (const toml::node* node = s.node(key)) {
        s.diag().at(*node, fmt::format("watchdog.{}: needs watchdog.stall or watchdog.straggler", key));
      }
    }
  }
}

} // namespace ddl::job_detail

namespace ddl {

std::string_view dump_tool_name(DumpTool tool) {
  switch (tool) {
  case DumpTool::py_spy:
    return "py-spy";
  case DumpTool::gdb:
    return "gdb";
  case DumpTool::automatic:
    break;
  }
  return "auto";
}

} // namespace ddl
