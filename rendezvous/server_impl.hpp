// SPDX-License-Identifier: MIT
#pragma once

// Internal to the rendezvous server: its connection and gang state. Only the
// server's own thread touches it, holding `mutex`.

#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "rendezvous/server.hpp"
#include "src/util/net.hpp"
#include "src/util/socket_server.hpp"

namespace ddl::rendezvous {

enum class Pending { none, barrier, get, allgather };
enum class RankState { absent, joined, left, dead };

struct Connection {
  Fd fd;
  std::uint64_t serial = 0;        // accept order; fds are reused, serials never
  std::string peer;                // the remote address, for per-address fairness
  std::string nonce;
  Clock::time_point handshake_deadline;
  int rank = -1;                   // set once joined
  bool handshaking = true;         // counted in Server::Impl::handshaking_*
  std::string in;                  // bytes read, not yet a whole frame
  std::deque<std::shared_ptr<const std::string>> out;
  std::size_t out_offset = 0;      // into out.front()
  std::size_t out_bytes = 0;       // queued, not yet sent
  bool write_armed = false;        // EPOLLOUT registered
  bool corked = false;             // its frames are being read: replies wait for the read's end
  bool closing = false;            // flush what is queued, then close; read nothing
  bool left = false;               // sent LEAVE
  bool doomed = false;             // to be closed after this round of events
  Pending pending = Pending::none;
  std::string get_key;
  Clock::time_point get_deadline;
  Millis get_timeout{0};
};

struct Server::Impl {
  ServerOptions options;
  SocketServer server;  // its listening socket, thread, wake-up (also in `epoll`) and stop
  Fd epoll;
  mutable std::mutex mutex;
  std::string endpoint;

  std::unordered_map<int, std::unique_ptr<Connection>> connections;
  // One receive buffer for every connection (the loop is one thread): not
  // 64 KiB cleared on the stack per readable event.
  std::vector<char> read_buffer = std::vector<char>(65536);
  // Connections that have not joined yet: (serial, fd) in accept order (entries
  // of connections that joined or closed are skipped lazily), and how many
  // each peer address holds.
  std::deque<std::pair<std::uint64_t, int>> handshaking;
  std::unordered_map<std::string, std::size_t> handshaking_per_peer;
  std::size_t handshaking_count = 0;
  std::uint64_t next_serial = 0;
  Clock::time_point accept_paused_until{};  // out of fds: accept again later
  std::vector<int> doomed;
  Clock::time_point next_deadline = Clock::time_point::max();

  // The gang, for this attempt.
  std::vector<RankState> ranks;
  std::vector<int> rank_fd;
  std::optional<Clock::time_point> first_join;
  std::vector<int> barrier_waiting;
  std::vector<std::optional<std::string>> gathered;
  std::vector<int> gather_waiting;
  std::unordered_map<std::string, std::string> store;
  std::size_t store_bytes = 0;
  std::string gone;  // why collective calls can no longer complete, "" while healthy
  std::size_t ranks_left = 0;  // ranks in RankState::left: none is the common case

  // server.cpp: the loop and its I/O.
  void run();
  void accept_all();
  void admit(int fd, std::string peer);
  bool evict_a_stranger();
  void handshake_over(Connection& conn);
  void pause_accepting();
  void on_readable(Connection& conn);
  void take_frames(Connection& conn);
  void flush(Connection& conn);
  void queue(Connection& conn, std::shared_ptr<const std::string> frame);
  void queue(Connection& conn, std::string frame);
  void doom(Connection& conn);
  void close_doomed();
  void check_deadlines(Clock::time_point now);
  void watch_deadline(Clock::time_point when);
  void reset_gang();

  // server_requests.cpp: what the frames mean.
  void handle_frame(Connection& conn, std::string_view payload);
  void handle_join(Connection& conn, FrameReader& reader);
  void handle_request(Connection& conn, FrameReader& reader);
  void handle_barrier(Connection& conn);
  void handle_set(Connection& conn, FrameReader& reader);
  void handle_get(Connection& conn, FrameReader& reader);
  void handle_allgather(Connection& conn, FrameReader& reader);
  void reply_error(Connection& conn, ErrorKind kind, std::string_view message);
  void refuse(Connection& conn, ErrorKind kind, std::string_view message);
  void rank_lost(int rank, bool died);
  void fail_waiters(const std::string& why, bool getters_too);
  Connection* connection_of(int fd);
  std::string collective_blocker() const;
};

std::string error_frame(ErrorKind kind, std::string_view message);

} // namespace ddl::rendezvous
