// SPDX-License-Identifier: MIT
// What the rendezvous frames mean: join, barrier, set, get, allgather, leave.
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "rendezvous/server_impl.hpp"
#include "rendezvous/crypto.hpp"

namespace ddl::rendezvous {

std::string error_frame(ErrorKind kind, std::string_view message) {
  return FrameWriter(MsgType::error).u32(static_cast<std::uint32_t>(kind)).bytes(message).finish();
}

void Server::Impl::reply_error(Connection& conn, ErrorKind kind, std::string_view message) {
  queue(conn, error_frame(kind, message));
}

// Answers with an error and closes the connection once that is sent.
void Server::Impl::refuse(Connection& conn, ErrorKind kind, std::string_view message) {
  reply_error(conn, kind, message);
  conn.closing = true;
  conn.pending = Pending::none;
  flush(conn);
}

void Server::Impl::handle_frame(Connection& conn, std::string_view payload) {
  FrameReader reader(payload);
  if (conn.rank < 0) {
    handle_join(conn, reader);
  } else {
    handle_request(conn, reader);
  }
}

void Server::Impl::handle_join(Connection& conn, FrameReader& reader) {
  auto rank = reader.u32();
  auto world = reader.u32();
  auto job = reader.bytes();
  auto mac = reader.raw(k_mac_bytes);
  const bool heartbeat = reader.type() == MsgType::heartbeat;
  if ((reader.type() != MsgType::join && !heartbeat) || !rank || !world || !job || !mac || !reader.at_end()) {
    refuse(conn, ErrorKind::bad_request, "expected a JOIN or HEARTBEAT frame");
    return;
  }
  // The MAC comes first: nothing else is looked at, and no state changes,
  // before the peer has proved it holds the token.
  std::string expected = join_mac(options.token, conn.nonce, *rank, *world, *job);
  if (!constant_time_equal(expected, *mac)) {
    spdlog::debug("rendezvous: refused a join: authentication failed");
    refuse(conn, ErrorKind::refused, "authentication failed (wrong DDL_TOKEN?)");
    return;
  }
  auto size = static_cast<std::uint32_t>(options.world_size);
  if (*world != size) {
    refuse(conn, ErrorKind::refused,
           fmt::format("world size {} does not match the job's {}", *world, size));
    return;
  }
  if (*rank >= size) {
    refuse(conn, ErrorKind::refused,
           fmt::format("rank {} is out of range for world size {}", *rank, size));
    return;
  }
  if (*job != options.job) {
    refuse(conn, ErrorKind::refused,
           fmt::format("job '{}' does not match this rendezvous", *job));
    return;
  }
  if (heartbeat) {
    if (options.on_heartbeat) {
      options.on_heartbeat(static_cast<int>(*rank));
    }
    queue(conn, FrameWriter(MsgType::ok).finish());
    conn.closing = true;
    flush(conn);
    return;
  }
  std::size_t index = *rank;
  if (ranks[index] == RankState::joined) {
    refuse(conn, ErrorKind::refused, fmt::format("rank {} has already joined", *rank));
    return;
  }
  if (ranks[index] == RankState::dead) {
    refuse(conn, ErrorKind::refused, fmt::format("rank {} has died in this attempt", *rank));
    return;
  }
  if (ranks[index] == RankState::left) --ranks_left;
  ranks[index] = RankState::joined;
  rank_fd[index] = conn.fd.get();
  handshake_over(conn);
  conn.rank = static_cast<int>(*rank);
  if (!first_join) first_join = Clock::now();
  spdlog::debug("rendezvous: rank {} joined", *rank);
  queue(conn, FrameWriter(MsgType::ok).finish());
}

void Server::Impl::handle_request(Connection& conn, FrameReader& reader) {
  if (conn.pending != Pending::none) {
    refuse(conn, ErrorKind::bad_request, "a request arrived before the previous one was answered");
    return;
  }
  switch (reader.type().value_or(MsgType::error)) {
    case MsgType::barrier:
      if (!reader.at_end()) break;
      handle_barrier(conn);
      return;
    case MsgType::set: handle_set(conn, reader); return;
    case MsgType::get: handle_get(conn, reader); return;
    case MsgType::allgather: handle_allgather(conn, reader); return;
    case MsgType::leave:
      if (!reader.at_end()) break;
      conn.left = true;
      queue(conn, FrameWriter(MsgType::ok).finish());
      conn.closing = true;
      flush(conn);
      return;
    default: break;
  }
  refuse(conn, ErrorKind::bad_request, "malformed or unknown request");
}

// Why a collective cannot complete: a rank died or has left.
std::string Server::Impl::collective_blocker() const {
  if (!gone.empty()) return gone;
  if (ranks_left == 0) return {};  // no scan of every rank per barrier call
  auto left = std::find(ranks.begin(), ranks.end(), RankState::left);
  if (left == ranks.end()) return {};
  return fmt::format("rank {} has left", left - ranks.begin());
}

void Server::Impl::handle_barrier(Connection& conn) {
  if (std::string why = collective_blocker(); !why.empty()) {
    reply_error(conn, ErrorKind::rank_gone, fmt::format("barrier failed: {}", why));
    return;
  }
  conn.pending = Pending::barrier;
  barrier_waiting.push_back(conn.fd.get());
  if (barrier_waiting.size() < ranks.size()) return;
  auto ok = std::make_shared<const std::string>(FrameWriter(MsgType::ok).finish());
  std::vector<int> waiting;
  waiting.swap(barrier_waiting);
  for (int fd : waiting) {
    if (Connection* peer = connection_of(fd)) {
      peer->pending = Pending::none;
      queue(*peer, ok);
    }
  }
}

void Server::Impl::handle_set(Connection& conn, FrameReader& reader) {
  auto key = reader.bytes();
  auto value = reader.bytes();
  if (!key || !value || !reader.at_end()) {
    refuse(conn, ErrorKind::bad_request, "malformed SET");
    return;
  }
  std::string name(*key);
  auto found = store.find(name);
  std::size_t old_bytes = found == store.end() ? 0 : found->first.size() + found->second.size();
  std::size_t new_bytes = store_bytes - old_bytes + key->size() + value->size();
  if (new_bytes > options.max_store_bytes) {
    reply_error(conn, ErrorKind::bad_request,
                fmt::format("the key/value store is full ({} bytes)", options.max_store_bytes));
    return;
  }
  store_bytes = new_bytes;
  store[name] = std::string(*value);
  queue(conn, FrameWriter(MsgType::ok).finish());
  auto answer = std::make_shared<const std::string>(FrameWriter(MsgType::value).bytes(*value).finish());
  for (auto& [fd, peer] : connections) {
    if (peer->pending == Pending::get && peer->get_key == name && !peer->doomed) {
      peer->pending = Pending::none;
      queue(*peer, answer);
    }
  }
}

void Server::Impl::handle_get(Connection& conn, FrameReader& reader) {
  auto key = reader.bytes();
  auto timeout_ms = reader.u32();
  if (!key || !timeout_ms || !reader.at_end()) {
    refuse(conn, ErrorKind::bad_request, "malformed GET");
    return;
  }
  auto found = store.find(std::string(*key));
  if (found != store.end()) {
    queue(conn, FrameWriter(MsgType::value).bytes(found->second).finish());
    return;
  }
  if (!gone.empty()) {
    reply_error(conn, ErrorKind::rank_gone, fmt::format("get '{}' failed: {}", *key, gone));
    return;
  }
  conn.pending = Pending::get;
  conn.get_key = std::string(*key);
  conn.get_timeout = Millis(*timeout_ms);
  conn.get_deadline = Clock::now() + conn.get_timeout;
  watch_deadline(conn.get_deadline);
}

void Server::Impl::handle_allgather(Connection& conn, FrameReader& reader) {
  auto value = reader.bytes();
  if (!value || !reader.at_end()) {
    refuse(conn, ErrorKind::bad_request, "malformed ALLGATHER");
    return;
  }
  if (std::string why = collective_blocker(); !why.empty()) {
    reply_error(conn, ErrorKind::rank_gone, fmt::format("allgather failed: {}", why));
    return;
  }
  conn.pending = Pending::allgather;
  gathered[static_cast<std::size_t>(conn.rank)] = std::string(*value);
  gather_waiting.push_back(conn.fd.get());
  if (gather_waiting.size() < ranks.size()) return;
  FrameWriter writer(MsgType::values);
  writer.u32(static_cast<std::uint32_t>(gathered.size()));
  std::size_t total = 0;
  for (const auto& part : gathered) {
    total += 4 + part->size();
    writer.bytes(*part);
  }
  std::vector<int> waiting;
  waiting.swap(gather_waiting);
  gathered.assign(ranks.size(), std::nullopt);
  auto answer = std::make_shared<const std::string>(
      total + 5 > options.max_message
          ? error_frame(ErrorKind::bad_request,
                        fmt::format("allgather result of {} bytes exceeds the {} byte limit",
                                    total, options.max_message))
          : writer.finish());
  for (int fd : waiting) {
    if (Connection* peer = connection_of(fd)) {
      peer->pending = Pending::none;
      queue(*peer, answer);
    }
  }
}

void Server::Impl::rank_lost(int rank, bool died) {
  auto index = static_cast<std::size_t>(rank);
  rank_fd[index] = -1;
  if (ranks[index] == RankState::left) --ranks_left;
  ranks[index] = died ? RankState::dead : RankState::left;
  if (!died) ++ranks_left;
  std::string why = died ? fmt::format("rank {} died (its connection closed without LEAVE)", rank)
                         : fmt::format("rank {} has left", rank);
  spdlog::debug("rendezvous: {}", why);
  // After the first death no get waits (handle_get refuses): one scan.
  const bool first_death = died && gone.empty();
  if (first_death) gone = why;
  fail_waiters(why, first_death);
}

// Collectives that cannot complete any more, and, when a rank died, blocked
// gets, are answered with an error naming the rank.
void Server::Impl::fail_waiters(const std::string& why, bool getters_too) {
  // Ranks leaving one by one at the end of a big job wait on nothing: no
  // scan of every connection per leave (quadratic in the world size).
  if (!getters_too && barrier_waiting.empty() && gather_waiting.empty()) return;
  auto answer = [&](std::string_view what) {
    return std::make_shared<const std::string>(
        error_frame(ErrorKind::rank_gone, fmt::format("{} failed: {}", what, why)));
  };
  auto barrier_error = answer("barrier");
  auto gather_error = answer("allgather");
  for (auto& [fd, conn] : connections) {
    if (conn->doomed) continue;
    if (conn->pending == Pending::barrier) {
      conn->pending = Pending::none;
      queue(*conn, barrier_error);
    } else if (conn->pending == Pending::allgather) {
      conn->pending = Pending::none;
      queue(*conn, gather_error);
    } else if (getters_too && conn->pending == Pending::get) {
      conn->pending = Pending::none;
      queue(*conn, answer(fmt::format("get '{}'", conn->get_key)));
    }
  }
  barrier_waiting.clear();
  gather_waiting.clear();
  gathered.assign(ranks.size(), std::nullopt);
}

} // namespace ddl::rendezvous
