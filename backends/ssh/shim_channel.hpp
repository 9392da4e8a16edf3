// SPDX-License-Identifier: MIT
#pragma once

// One process under the shim on a channel of a host's session: exec of the
// fixed shim command, the payload on stdin, output and the exit status or
// signal as the channel reports them. Drive it with an ssh_event holding the
// session; not thread-safe, like the session itself.

#include <optional>
#include <string>
#include <string_view>

#include "src/launch/backend.hpp"
#include "backends/shim.hpp"
#include "backends/ssh/host_session.hpp"
#include "src/util/error.hpp"

namespace ddl {

class ShimChannel final : ChannelListener {
public:
  // Receives what the process does; exited() comes exactly once.
  class Sink {
  public:
    virtual ~Sink() = default;
    virtual void started(long pid) = 0;
    virtual void output(Stream stream, std::string_view bytes) = 0;
    virtual void exited(const RankExit& how) = 0;
  };

  // Without a sink, what arrives is held until attach().
  explicit ShimChannel(HostSession& session, Sink* sink = nullptr);
  ~ShimChannel() override;
  ShimChannel(const ShimChannel&) = delete;
  ShimChannel& operator=(const ShimChannel&) = delete;

  // Opens the channel, runs the shim and writes `payload` (shim_payload),
  // or a check block (shim_check_payload): then wait for ready(), attach a
  // sink and send_payload().
  Result<void> start(const std::string& payload);
  bool ready() const { return stderr_filter_.ready(); }
  // A probe request (shim_probe_request): starts the shim on the first,
  // else writes it to the waiting shim. Then wait for answered().
  Result<void> ask(const std::string& request);
  bool answered() const { return stderr_filter_.answered(); }
  ShimAnswer take_answer() { return stderr_filter_.take_answer(); }
  const std::optional<std::string>& refused_protocol() const { return stderr_filter_.protocol(); }
  void attach(Sink& sink);
  // The channel, for `listener` to take over (a shim waiting for its next
  // request, which then execs ddl's relay); this one is left without.
  std::unique_ptr<HostChannel> hand_over(ChannelListener& listener);
  Result<void> send_payload(const std::string& payload);
  // The exit status, once closed (for checks).
  std::optional<int> exit_status() const { return exit_status_; }
  const std::string& held_stderr() const { return held_stderr_; }
  // Writes a control line (shim_signal_line, k_shim_stop_line).
  void send(std::string_view line);
  // Closes its stdin: the shim ends the process group (TERM, grace, KILL).
  void send_eof();
  // The remote side closed the channel: the process is over.
  bool closed() const { return closed_; }
  // Reports the end to the sink (once): the exit status or signal, or
  // `lost` as a launch error when the connection broke first.
  void finish(const std::optional<std::string>& lost = std::nullopt);
  bool finished() const { return finished_; }

private:
  void data(std::string_view bytes, bool is_stderr) override;
  void ended() override { closed_ = true; }
  void exit_status(int status) override { exit_status_ = status; }
  void exit_signal(std::string_view name) override;
  void report_started();

  HostSession& session_;
  std::unique_ptr<HostChannel> channel_;
  Sink* sink_;
  ShimStderr stderr_filter_;
  std::string held_stdout_;  // until the pid line arrived on stderr
  std::string held_stderr_;  // until a sink is attached
  bool started_reported_ = false;
  bool closed_ = false;
  bool finished_ = false;
  std::optional<int> exit_status_;
  int exit_signal_ = 0;
};

} // namespace ddl
