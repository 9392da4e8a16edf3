// SPDX-License-Identifier: MIT
#pragma once

// The ranks on one SSH connection, served by one thread: it opens their
// channels, writes control lines, and turns channel events into RankEvents.
// libssh sessions are not thread-safe, so every libssh call for this
// session happens on that thread; the others only queue work.

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "src/launch/backend.hpp"
#include "backends/ssh/relay_session.hpp"
#include "backends/ssh/shim_channel.hpp"
#include "backends/ssh/ssh_connect.hpp"

namespace ddl {

class HostLink {
public:
  // Channels opened and checked in advance, by rank.
  using ReadyChannels = std::map<int, std::unique_ptr<ShimChannel>>;
  // Makes a new connection to the host (on the link's thread).
  using Reconnect = std::function<Result<HostSessionPtr>()>;
  // With `relay` (ddl's relay on the host, over `session`), ranks' channels
  // are the relay's. With `reconnect`, a rank started after the connection
  // was lost (a restart) gets one new connection (without a relay); when
  // that fails too, or was made before, the host is lost for good.
  HostLink(std::string host_name, HostSessionPtr session, std::unique_ptr<RelaySession> relay, ReadyChannels ready = {},
           Reconnect reconnect = {});
  ~HostLink();
  HostLink(const HostLink&) = delete;
  HostLink& operator=(const HostLink&) = delete;

  // Queues the start of a rank; failures arrive as events.exited().
  void start(int rank, std::string payload, RankEvents& events);
  // Queues a control line for a rank (a signal or stop).
  void send(int rank, std::string line);
  // KILLs what still runs, closes the channels and the connection, and
  // joins the thread (bounded).
  void close();
  // As close(), but the connection, and ddl's relay over it while it lives,
  // are kept and returned for a later launch on the host (null when lost).
  struct Kept {
    HostSessionPtr session;
    std::unique_ptr<RelaySession> relay;  // over session
  };
  Kept release();
  const std::string& host_name() const { return host_name_; }

private:
  struct RankChannel;
  using Task = std::function<void()>;
  void post(Task task);
  void run();
  void drain_tasks();
  void reap_closed();
  void lose_connection();
  void send_heartbeats();
  void reconnect_once();
  // Where ranks' channels open: the relay while it lives, else the connection.
  HostSession& rank_session();
  bool connection_lost() const { return session_->closed() || (relay_ && relay_->closed()); }

  std::string host_name_;
  HostSessionPtr session_;
  std::unique_ptr<RelaySession> relay_;  // over session_; thread-owned after construction
  ReadyChannels ready_;  // thread-owned after construction
  int wake_fd_ = -1;
  std::mutex mutex_;
  std::deque<Task> tasks_;
  bool closing_ = false;
  bool lost_ = false;
  bool keep_session_ = false;  // release(): the thread leaves session_ open
  Reconnect reconnect_;
  bool reconnected_ = false;
  ssh_event event_ = nullptr;  // thread-owned: polls session_ and wake_fd_
  std::map<int, std::unique_ptr<RankChannel>> channels_;  // thread-owned
  std::chrono::steady_clock::time_point next_beat_{};     // thread-owned
  std::thread thread_;
};

} // namespace ddl
