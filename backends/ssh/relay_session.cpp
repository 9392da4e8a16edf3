// SPDX-License-Identifier: MIT
#include "backends/ssh/relay_session.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/shim.hpp"
#include "backends/ssh/shim_probe.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "backends/ssh/ssh_probe.hpp"
#include "ddl_version.hpp"
#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

// The relay's stdin and stdout: the channel of the host's connection that
// ran the shim, handed over to the relay.
class RelayPipe final : public FramePipe, public ChannelListener {
public:
  explicit RelayPipe(HostSession& connection) : connection_(connection) {}
  // EOF on the relay's channel: the relay closes every command's stdin.
  ~RelayPipe() override {
    if (channel_ && !ended_) {
      channel_->send_eof();
    }
  }
  RelayPipe(const RelayPipe&) = delete;
  RelayPipe& operator=(const RelayPipe&) = delete;

  void take(std::unique_ptr<HostChannel> channel) { channel_ = std::move(channel); }
  bool send(std::string_view bytes) override { return channel_ && channel_->write(bytes); }
  void add_to(ssh_event event) override { connection_.add_to(event); }
  void remove_from(ssh_event event) override { connection_.remove_from(event); }
  bool ended() const override { return ended_ || connection_.closed(); }
  std::string error() const override;
  void malformed() override {
    stderr_ += "a malformed frame";
    ended_ = true;
  }
  std::string name() const override { return "ddl's relay"; }

private:
  // ChannelListener: the relay's own channel. Its channels stay as they
  // are when it ends: like a lost connection, ended() says so.
  void data(std::string_view bytes, bool is_stderr) override;
  void exit_status(int status) override { status_ = status; }
  void exit_signal(std::string_view name) override { signal_ = std::string(name); }
  void ended() override { ended_ = true; }

  HostSession& connection_;
  std::unique_ptr<HostChannel> channel_;
  bool ended_ = false;
  std::string stderr_;  // the relay's (or the shim's) own words, capped
  std::optional<int> status_;
  std::string signal_;
};

constexpr std::size_t k_stderr_cap = 4096;

void RelayPipe::data(std::string_view bytes, bool is_stderr) {
  if (is_stderr) {
    stderr_.append(bytes.substr(0, k_stderr_cap - std::min(k_stderr_cap, stderr_.size())));
  } else {
    deliver(bytes);
  }
}

std::string RelayPipe::error() const {
  if (!ended_) {
    return connection_.error();
  }
  std::string how = status_ ? fmt::format("exit {}", *status_) : !signal_.empty() ? "SIG" + signal_ : "no status";
  std::string said(trim(stderr_));
  return fmt::format("ddl's relay there ended ({}){}", how, said.empty() ? "" : ": " + said);
}

// Exec request: the relay takes over the shim's channel.
constexpr const char* k_exec_relay = "exec \"$1\" worker ssh-relay";

// Status 0 where $1 is this ddl ($2: its --version line).
constexpr const char* k_same_ddl_script = "v=$(\"$1\" --version 2>/dev/null) && [ \"$v\" = \"$2\" ]";

} // namespace

Result<std::unique_ptr<RelaySession>> start_relay_where_same_ddl(const SshSection& ssh, const Host& host,
                                                                  SshConnection& connection) {
  const std::string ddl = remote_ddl_path(ssh);
  auto same = ask_shim(ssh, host, connection, k_same_ddl_script, {ddl, "ddl " DDL_VERSION});
  if (!same) {
    return fail(same.error());
  }
  if (same->status != 0 || !connection.shim) {
    spdlog::info("{}: no ddl {} at {}: a login shell per rank", host.name, DDL_VERSION, ddl);
    return std::unique_ptr<RelaySession>();
  }
  return start_relay(*connection.session, std::move(connection.shim), ddl, remote_answer_timeout(ssh));
}

Result<std::unique_ptr<RelaySession>> start_relay(HostSession& connection, std::unique_ptr<ShimChannel> shim,
                                                  const std::string& ddl_path, Millis timeout) {
  auto request = shim_exec_request(k_exec_relay, {ddl_path});
  if (!request) {
    return fail(request.error());
  }
  auto owned = std::make_unique<RelayPipe>(connection);
  RelayPipe& pipe = *owned;
  auto relay = std::make_unique<RelaySession>(std::move(owned), FrameChannelMode{.exec_waits = false, .holds_output = true},
                                              timeout);
  pipe.take(shim->hand_over(pipe));
  shim.reset();
  if (!pipe.send(*request)) {
    return fail(ExitCode::launch, fmt::format("cannot start ddl's relay: {}", connection.error()));
  }
  if (auto greeted = relay->greet(std::nullopt, "starting ddl's relay"); !greeted) {
    if (stop::is_stop_error(greeted.error())) {
      return fail(greeted.error());
    }
    return fail(ExitCode::launch,
                fmt::format("cannot start ddl's relay ({} worker ssh-relay): {}", ddl_path, greeted.error().message));
  }
  return relay;
}

} // namespace ddl
