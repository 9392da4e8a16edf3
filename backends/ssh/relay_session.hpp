// SPDX-License-Identifier: MIT
#pragma once

// The launcher's side of ddl's relay on a host (relay_server.hpp): a
// HostSession whose channels are channels of the relay, carried as frames
// over one channel of the host's connection. The ranks of a host then share
// the one login shell that ran the shim of its probes, where each would
// otherwise run its own (with the user's .bashrc, conda, modules).

#include <map>
#include <memory>
#include <string>

#include "backends/ssh/broker_wire.hpp"
#include "backends/ssh/host_session.hpp"
#include "backends/ssh/shim_channel.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"  // SshSection
#include "src/util/duration.hpp"

namespace ddl {

class RelayChannel;

class RelaySession final : public HostSession, ChannelListener {
public:
  // `shim`, a shim of `connection` waiting for its next request, execs the
  // relay at `ddl_path` (which must be this ddl's version: check first),
  // and the relay's greeting is awaited (bounded by `timeout`). On failure
  // the shim is gone: ExitCode::launch naming why.
  static Result<std::unique_ptr<RelaySession>> start(HostSession& connection, std::unique_ptr<ShimChannel> shim,
                                                     const std::string& ddl_path, Millis timeout);
  // Sends EOF on the relay's channel: the relay closes every command's
  // stdin. Its channels must be freed first.
  ~RelaySession() override;
  RelaySession(const RelaySession&) = delete;
  RelaySession& operator=(const RelaySession&) = delete;

  // Tells the relay the launcher is there (it ends after k_relay_idle of
  // silence without commands): for a relay kept between launches.
  void beat() { send(broker::Type::data, 0); }
  std::unique_ptr<HostChannel> channel(ChannelListener& listener) override;
  void add_to(ssh_event event) override { connection_.add_to(event); }
  void remove_from(ssh_event event) override { connection_.remove_from(event); }
  bool closed() const override { return ended_ || connection_.closed(); }
  std::string error() const override;

  // For RelayChannel.
  bool send(broker::Type type, std::uint32_t channel, std::string_view bytes = {});
  void attach(std::uint32_t id, RelayChannel* channel) { channels_[id] = channel; }
  void detach(std::uint32_t id) { channels_.erase(id); }

private:
  explicit RelaySession(HostSession& connection) : connection_(connection) {}
  // ChannelListener: the relay's own channel.
  void data(std::string_view bytes, bool is_stderr) override;
  void exit_status(int status) override { status_ = status; }
  void exit_signal(std::string_view name) override { signal_ = std::string(name); }
  void ended() override;

  HostSession& connection_;
  std::unique_ptr<HostChannel> channel_;
  broker::FrameReader reader_;
  std::map<std::uint32_t, RelayChannel*> channels_;
  std::uint32_t next_id_ = 1;
  bool greeted_ = false;
  bool ended_ = false;
  std::string greeting_error_;
  std::string stderr_;  // the relay's (or the shim's) own words, capped
  std::optional<int> status_;
  std::string signal_;
};

struct SshConnection;

// ddl's relay over `connection`'s shim (one is started where it has none),
// where the host has this ddl at remote_ddl_path(ssh); null (the shim kept)
// where it has not. An error where the shim or the relay failed.
Result<std::unique_ptr<RelaySession>> start_relay_where_same_ddl(const SshSection& ssh, const Host& host,
                                                                  SshConnection& connection);

} // namespace ddl
