// SPDX-License-Identifier: MIT
#include "src/launch/output.hpp"

#include <array>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>

#include <fcntl.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/util/file.hpp"
#include "src/util/json.hpp"
#include "src/util/own_path.hpp"
#include "src/util/rank_logs.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

std::string describe_exit(const RankExit& how) {
  if (!how.launch_error.empty()) {
    return "launch error: " + how.launch_error;
  }
  if (how.signal != 0) {
    return signal_name(how.signal);
  }
  return fmt::format("exit code {}", how.code);
}

Output::Output(OutputOptions options)
    : options_(std::move(options)),
      writer_(options_.stdout_fd, options_.stderr_fd, options_.max_pending_bytes),
      tags_(options_.host_ranks) {}

Output::~Output() {
  end_attempt();
  // Everything queued reaches the reader, unless it does not read: after a
  // stop that gets 2 s, and a signal to ddl ends the wait at once.
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    stopping = stopping_;
  }
  auto deadline = stopping ? StreamWriter::Clock::now() + std::chrono::seconds(2)
                           : StreamWriter::Clock::time_point::max();
  writer_.drain(deadline, [] {
    pollfd signal{SignalPipe::fd(), POLLIN, 0};
    return signal.fd >= 0 && ::poll(&signal, 1, 0) > 0;
  });
}

Result<void> Output::begin_attempt(int attempt, int world_size) {
  end_attempt();
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
    attempt_ = attempt;
    tags_.reset();
    if (options_.fold) {
      fold_.reset(world_size);
      fold_pending_ = true;
    }
  }
  writer_.resume_waiting();
  if (options_.log_dir.empty()) {
    return {};
  }
  if (auto own = own_folder(options_.log_dir, "log folder", true); !own) {
    return fail(ExitCode::usage, own.error().message);  // a log folder that cannot be made is the user's to fix
  }
  return open_logs(attempt, tags_.active() ? tags_.world_size() : world_size);
}

// DIR/rank-R.attempt-A.log, or with split_logs .stdout.log and .stderr.log.
Result<void> Output::open_logs(int attempt, int world_size) {
  std::lock_guard lock(mutex_);
  for (int rank = 0; rank < world_size; ++rank) {
    const auto files = rank_output_logs(options_.log_dir, rank, attempt, options_.split_logs);
    std::array<std::string, 2> paths{files.front(), files.back()};
    log_fds_.push_back({-1, -1});
    log_paths_.push_back(paths);
    for (std::size_t s = 0; s < 2; ++s) {
      int& fd = log_fds_.back()[s];
      if (s == 1 && !options_.split_logs) {
        fd = log_fds_.back()[0];
        continue;
      }
      auto opened = open_own_file(paths[s], O_WRONLY | O_CREAT | O_TRUNC, "log file");
      if (!opened) {
        close_logs();
        return fail(ExitCode::usage, opened.error().message);
      }
      fd = *opened;
    }
  }
  return {};
}

// Under mutex_.
void Output::close_logs() {
  for (const auto& fds : log_fds_) {
    if (fds[0] >= 0) {
      ::close(fds[0]);
    }
    if (fds[1] >= 0 && fds[1] != fds[0]) {
      ::close(fds[1]);
    }
  }
  log_fds_.clear();
  log_paths_.clear();
}

void Output::end_attempt() {
  std::string folded;
  {
    std::lock_guard lock(mutex_);
    close_logs();
    if (fold_pending_) {
      fold_pending_ = false;
      std::vector<std::string> hosts;
      for (const RankLabel& label : options_.labels) {
        hosts.push_back(label.host);
      }
      folded = fold_.folded(hosts);
      fold_.reset(0);
    }
  }
  if (!folded.empty()) {
    write_out(std::move(folded));
  }
}

void Output::stop_waiting() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  writer_.stop_waiting();
}

bool Output::passes_carriage_returns() const {
  return !options_.json && !options_.fold && ::isatty(options_.stdout_fd) == 1;
}

std::string Output::log_error() const {
  std::lock_guard lock(mutex_);
  return log_error_;
}

std::string redact(std::string_view text, const std::vector<std::string>& secrets) {
  std::string out(text);
  for (const std::string& secret : secrets) {
    if (secret.empty()) {
      continue;
    }
    for (std::size_t at = out.find(secret); at != std::string::npos; at = out.find(secret, at)) {
      out.replace(at, secret.size(), "[redacted]");
      at += std::string_view("[redacted]").size();
    }
  }
  return out;
}

std::size_t secret_start_at_end(std::string_view text, const std::vector<std::string>& secrets) {
  std::size_t longest = 0;
  for (const std::string& secret : secrets) {
    for (std::size_t size = std::min(secret.size() - (secret.empty() ? 0 : 1), text.size()); size > longest; --size) {
      if (text.ends_with(std::string_view(secret).substr(0, size))) {
        longest = size;
        break;
      }
    }
  }
  return longest;
}

namespace {

// A JSON Lines event: "event" and "time" first, then what the caller adds.
Json event(std::string_view kind) {
  return {{"event", kind}, {"time", event_time_now()}};
}

// Milliseconds are what the clock resolves; more digits would be noise.
double rounded_to_millis(double seconds) { return std::round(seconds * 1000) / 1000; }

} // namespace

void Output::started(int rank, std::string_view host, long pid, int attempt) {
  if (!options_.json) {
    return;
  }
  Json started = event("started");
  started.update({{"rank", rank}, {"host", host}, {"pid", pid}, {"attempt", attempt}});
  write_out(to_json_text(started) + "\n");
}

std::optional<int> Output::blamed_mpi_rank(int rank) const {
  std::lock_guard lock(mutex_);
  return tags_.active() ? tags_.blamed(rank) : std::nullopt;
}

std::string Output::line(int rank, Stream stream, std::string_view raw, LineEnd end) {
  std::string joined;
  {
    std::lock_guard lock(mutex_);
    auto held = held_.find({rank, stream});
    if (held != held_.end()) {
      joined = std::move(held->second);
      held_.erase(held);
    }
    joined.append(raw);
    if (end == LineEnd::partial) {
      const std::size_t keep = secret_start_at_end(joined, options_.secrets);
      if (keep > 0) {
        held_[{rank, stream}] = joined.substr(joined.size() - keep);
        joined.resize(joined.size() - keep);
      }
    }
  }
  std::string text = redact(joined, options_.secrets);
  std::string_view log_end = end == LineEnd::newline ? "\n" : end == LineEnd::carriage ? "\r" : "";
  std::string stamp = options_.timestamps ? event_time_now() + " " : "";
  bool folded = false;
  // The line as the tap and --json events tell it: under --mpi pmix the
  // MPI rank's, its tag removed (a "[R+] " piece goes on in R's next).
  int shown_rank = rank;
  std::string_view shown_text = text;  // routed: a view into `text` too
  LineEnd shown_end = end;
  {
    std::lock_guard lock(mutex_);
    if (tags_.active()) {
      auto routed = tags_.route(rank, stream, text, end);
      write_log(routed.rank, stream, routed.text, routed.continues ? "" : log_end);
      shown_rank = routed.rank;
      shown_text = routed.text;
      shown_end = routed.continues ? LineEnd::partial : end;
    } else {
      write_log(rank, stream, text, log_end);
    }
    folded = fold_pending_;
    if (folded && shows(rank)) {
      fold_.add(rank, text, end == LineEnd::partial ? "" : "\n");
    }
  }
  if (options_.tap) {
    options_.tap(shown_rank, stream, shown_text, shown_end);
  }
  if (shows(rank) && !folded) {
    if (options_.json) {
      print_line(shown_rank, stream, std::string(shown_text), shown_end);
    } else {
      print_line(rank, stream, stamp + prefix_of(rank, end == LineEnd::partial) + text, end);
    }
  }
  return text;
}

// One rank line on ddl's stdout or stderr: an event, or the text as tagged.
void Output::print_line(int rank, Stream stream, const std::string& text, LineEnd end) {
  if (options_.json) {
    Json line = event("output");
    line.update({{"rank", rank}, {"stream", stream == Stream::out ? "stdout" : "stderr"}, {"line", valid_utf8(text)}});
    if (end == LineEnd::partial) {
      line["partial"] = true;
    }
    write_out(to_json_text(line) + "\n", true);
    return;
  }
  std::string tagged = text + (end == LineEnd::carriage ? "\r" : "\n");
  if (stream == Stream::out) {
    write_out(std::move(tagged), true);
  } else {
    write_err(std::move(tagged), true);
  }
}

std::string Output::prefix_of(int rank, bool partial) const {
  const auto index = static_cast<std::size_t>(rank);
  PrefixFields fields{rank, "", 0, attempt_, partial};
  if (index < options_.labels.size()) {
    fields.host = options_.labels[index].host;
    fields.local_rank = options_.labels[index].local_rank;
  }
  return options_.prefix.render(fields);
}

void Output::exited(int rank, const RankExit& how) {
  for (Stream stream : {Stream::out, Stream::err}) {
    bool held = false;
    {
      std::lock_guard lock(mutex_);
      held = held_.contains({rank, stream});
    }
    if (held) {
      line(rank, stream, "", LineEnd::newline);  // the held end of its last line
    }
  }
  if (!options_.json) {
    return;
  }
  Json exited = event("exited");
  exited["rank"] = rank;
  if (!how.launch_error.empty()) {
    exited["error"] = how.launch_error;
  } else {
    exited["code"] = how.code;
    if (how.signal != 0) {
      exited["signal"] = signal_name(how.signal);
    }
    if (!how.stopped_by.empty()) {
      exited["stopped_by"] = how.stopped_by;
    }
  }
  write_out(to_json_text(exited) + "\n");
}

void Output::restarting(int attempt, int max_restarts) {
  if (options_.json) {
    Json restart = event("restart");
    restart.update({{"attempt", attempt}, {"max_restarts", max_restarts}});
    write_out(to_json_text(restart) + "\n");
  }
}

void Output::host_excluded(const LeftOutHost& host, int attempt) {
  if (!options_.json) {
    write_err(fmt::format("ddl: leaving out host {}: {}\n", host.name, host.why));
    return;
  }
  Json excluded = event("host_excluded");
  excluded.update({{"host", host.name}, {"why", host.why}, {"attempt", attempt}});
  write_out(to_json_text(excluded) + "\n");
}

namespace {

Json excluded_json(const std::vector<LeftOutHost>& hosts) {
  Json list = Json::array();
  for (const auto& host : hosts) {
    list.push_back({{"host", host.name}, {"why", host.why}});
  }
  return list;
}

std::string excluded_text(const std::vector<LeftOutHost>& hosts) {
  std::string out;
  for (const auto& host : hosts) {
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", host.name, host.why);
  }
  return out;
}

} // namespace

void Output::summary(const JobSummary& summary) {
  if (options_.on_summary) {
    options_.on_summary(summary);
  }
  if (!options_.json) {
    if (!summary.excluded_hosts.empty()) {
      write_err(fmt::format("ddl: excluded host{}: {}\n", summary.excluded_hosts.size() == 1 ? "" : "s",
                            excluded_text(summary.excluded_hosts)));
    }
    if (summary.dropped_lines > 0) {
      write_err(fmt::format("ddl: {} lines of rank output were dropped: ddl's stdout or stderr was not being read\n",
                            summary.dropped_lines));
    }
    if (!summary.log_error.empty()) {
      write_err(fmt::format("ddl: the rank logs are incomplete: {}\n", summary.log_error));
    }
    return;
  }
  Json done = event("summary");
  done.update({{"result", summary.result}, {"exit_code", summary.exit_code}, {"attempts", summary.attempts},
               {"elapsed_s", rounded_to_millis(summary.elapsed_s)}});
  if (summary.failed_rank >= 0) {
    done.update({{"failed_rank", summary.failed_rank}, {"host", summary.host}, {"code", summary.how.code}});
    if (summary.how.signal != 0) {
      done["signal"] = signal_name(summary.how.signal);
    }
    if (const auto& error = summary.rank_error) {
      done["error"] = {{"message", redact(error->message, options_.secrets)},
                       {"traceback", redact(error->traceback, options_.secrets)}, {"timestamp", error->timestamp}};
    }
  }
  if (summary.checkpointed) {
    done["checkpointed"] = true;
  }
  if (!summary.stalled_ranks.empty()) {
    done["stalled_ranks"] = summary.stalled_ranks;
    Json groups = Json::array();
    for (const StallGroup& group : summary.stall_groups) {
      Json item = {{"ranks", group.ranks}, {"where", group.where}, {"suspect", group.suspect}};
      if (group.suspect) {
        item["host"] = group.host;
      }
      groups.push_back(std::move(item));
    }
    done["stall_groups"] = std::move(groups);
  }
  if (summary.dropped_lines > 0) {
    done["dropped_lines"] = summary.dropped_lines;
  }
  if (!summary.log_error.empty()) {
    done["log_error"] = summary.log_error;
  }
  if (!summary.excluded_hosts.empty()) {
    done["excluded_hosts"] = excluded_json(summary.excluded_hosts);
  }
  write_out(to_json_text(done) + "\n");
}

void Output::message(std::string_view text) { write_err(redact(text, options_.secrets)); }

void Output::on_stdout_closed(std::function<void()> callback) { writer_.on_stdout_closed(std::move(callback)); }

void Output::write_out(std::string text, bool may_wait) {
  writer_.write(StreamWriter::Target::out, std::move(text), may_wait);
}

void Output::write_err(std::string text, bool may_wait) {
  writer_.write(StreamWriter::Target::err, std::move(text), may_wait);
}

// Under mutex_. The first failed write (a full disk) is said once on stderr;
// the logs are not written any more, and the summary says they are incomplete.
void Output::write_log(int rank, Stream stream, std::string_view text, std::string_view end) {
  auto index = static_cast<std::size_t>(rank);
  if (index >= log_fds_.size() || !log_error_.empty()) {
    return;
  }
  const std::size_t which = stream == Stream::out ? 0 : 1;
  if (!write_fully(log_fds_[index][which], text, end)) {
    log_error_ = fmt::format("cannot write {}: {}", log_paths_[index][which], std::strerror(errno));
    write_err(fmt::format("ddl: {}; rank logs are not written from here on{}\n", log_error_,
                          options_.strict_logs ? " (strict logs: ddl will exit 3)" : ""));
  }
}


} // namespace ddl
