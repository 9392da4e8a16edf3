// SPDX-License-Identifier: MIT
#include "rendezvous/server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>


#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "rendezvous/crypto.hpp"
#include "rendezvous/server_impl.hpp"
#include "src/util/duration.hpp"
#include "src/util/signals.hpp"

namespace ddl::rendezvous {
namespace {

constexpr std::uint64_t k_listener_tag = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t k_wake_tag = k_listener_tag - 1;

void epoll_set(int epoll, int op, int fd, std::uint32_t events, std::uint64_t tag) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  ::epoll_ctl(epoll, op, fd, &ev);
}

// The peer's address as raw bytes: the key of the per-address fairness.
std::string peer_key(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    const auto& in4 = reinterpret_cast<const sockaddr_in&>(addr);
    return std::string(reinterpret_cast<const char*>(&in4.sin_addr), sizeof in4.sin_addr);
  }
  if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    return std::string(reinterpret_cast<const char*>(&in6.sin6_addr), sizeof in6.sin6_addr);
  }
  return {};
}

} // namespace

Server::Server() : impl_(std::make_unique<Impl>()) {}
Server::~Server() { stop(); }

Result<std::string> Server::start(const ServerOptions& options) {
  if (impl_->server.running()) return fail(ExitCode::launch, "rendezvous: already started");
  if (options.world_size < 1) return fail(ExitCode::usage, "rendezvous: world size must be >= 1");
  impl_->options = options;
  // The kernel's largest accept queue (somaxconn caps it): a burst of
  // strangers must not push the real ranks' connects into SYN retries.
  int backlog = 65535;
  auto listener = net::listen_tcp(options.bind_address, options.port, backlog, k_net_wording);
  if (!listener) return fail(listener.error());
  // Accepted connections inherit it: no setsockopt per rank.
  int one = 1;
  ::setsockopt(listener->get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (auto opened = impl_->server.open(std::move(*listener), "rendezvous"); !opened) return fail(opened.error());
  impl_->epoll = Fd(::epoll_create1(EPOLL_CLOEXEC));
  if (!impl_->epoll) {
    return fail(ExitCode::launch, fmt::format("rendezvous: {}", std::strerror(errno)));
  }
  epoll_set(impl_->epoll.get(), EPOLL_CTL_ADD, impl_->server.listener(), EPOLLIN, k_listener_tag);
  epoll_set(impl_->epoll.get(), EPOLL_CTL_ADD, impl_->server.wake_fd(), EPOLLIN, k_wake_tag);
  impl_->endpoint = net::format_endpoint(
      options.advertise_address.empty() ? options.bind_address : options.advertise_address,
                                         net::local_port(impl_->server.listener()));
  impl_->reset_gang();
  impl_->server.run([impl = impl_.get()] { impl->run(); });
  return impl_->endpoint;
}

void Server::stop() {
  if (!impl_->server.running()) return;
  impl_->server.stop();
  std::lock_guard lock(impl_->mutex);
  impl_->connections.clear();
}

void Server::reset() {
  std::lock_guard lock(impl_->mutex);
  impl_->connections.clear();
  impl_->doomed.clear();
  impl_->handshaking.clear();
  impl_->handshaking_per_peer.clear();
  impl_->handshaking_count = 0;
  impl_->reset_gang();
}

std::string Server::endpoint() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->endpoint;
}

std::vector<int> Server::missing_ranks() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<int> missing;
  for (std::size_t r = 0; r < impl_->ranks.size(); ++r) {
    if (impl_->ranks[r] == RankState::absent) missing.push_back(static_cast<int>(r));
  }
  return missing;
}

std::optional<Clock::time_point> Server::first_join() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->first_join;
}

std::vector<int> Server::overdue_ranks(Millis timeout) const {
  auto since = first_join();
  if (!since || Clock::now() - *since < timeout) return {};
  return missing_ranks();
}

std::optional<std::string> Server::value(std::string_view key) const {
  std::lock_guard lock(impl_->mutex);
  auto found = impl_->store.find(std::string(key));
  if (found == impl_->store.end()) return std::nullopt;
  return found->second;
}

std::string overdue_message(Millis timeout, const std::vector<int>& ranks) {
  return fmt::format("rendezvous timed out after {}: rank{} {} never joined",
                     format_duration(timeout), ranks.size() == 1 ? "" : "s",
                     fmt::join(ranks, ", "));
}

void Server::Impl::reset_gang() {
  auto world = static_cast<std::size_t>(options.world_size);
  ranks.assign(world, RankState::absent);
  ranks_left = 0;
  rank_fd.assign(world, -1);
  first_join.reset();
  barrier_waiting.clear();
  gathered.assign(world, std::nullopt);
  gather_waiting.clear();
  store.clear();
  store_bytes = 0;
  gone.clear();
  next_deadline = Clock::time_point::max();
}

void Server::Impl::run() {
  std::array<epoll_event, 256> events{};
  for (;;) {
    int wait_ms = -1;
    {
      std::lock_guard lock(mutex);
      if (server.stopping()) return;
      if (next_deadline != Clock::time_point::max()) {
        auto left = std::chrono::ceil<Millis>(next_deadline - Clock::now()).count();
        wait_ms = static_cast<int>(std::clamp<long long>(left, 0, 60'000));
      }
    }
    int n = ::epoll_wait(epoll.get(), events.data(), static_cast<int>(events.size()), wait_ms);
    if (n < 0 && errno != EINTR) {
      spdlog::error("rendezvous: epoll_wait: {}", std::strerror(errno));
      return;
    }
    std::lock_guard lock(mutex);
    if (server.stopping()) return;
    for (int i = 0; i < n; ++i) {
      const epoll_event& ev = events[static_cast<std::size_t>(i)];
      if (ev.data.u64 == k_listener_tag) {
        accept_all();
        continue;
      }
      if (ev.data.u64 == k_wake_tag) {
        server.drain_wake();
        continue;
      }
      Connection* conn = connection_of(static_cast<int>(ev.data.u64));
      if (!conn || conn->doomed) continue;
      if (ev.events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(*conn);
      if (!conn->doomed && (ev.events & EPOLLOUT)) flush(*conn);
      close_doomed();
    }
    auto now = Clock::now();
    if (now >= next_deadline) check_deadlines(now);
    close_doomed();
  }
}

Connection* Server::Impl::connection_of(int fd) {
  auto found = connections.find(fd);
  return found == connections.end() ? nullptr : found->second.get();
}

void Server::Impl::accept_all() {
  if (Clock::now() < accept_paused_until) return;
  auto limit = static_cast<std::size_t>(options.world_size + options.spare_connections);
  auto take = [this, limit](int fd, const sockaddr_storage& addr) {
    if (handshaking_count >= limit) evict_a_stranger();
    admit(fd, peer_key(addr));
  };
  for (;;) {
    auto end = server.accept_waiting([] { return true; }, take);
    if (end == SocketServer::AcceptEnd::out_of_fds) {
      // Out of descriptors: a stranger makes room, or accepting waits a while.
      if (evict_a_stranger()) continue;
      pause_accepting();
    } else if (end == SocketServer::AcceptEnd::failed) {
      spdlog::warn("rendezvous: accept: {}", std::strerror(errno));
    }
    return;
  }
}

void Server::Impl::admit(int fd, std::string peer) {
  auto nonce = random_bytes(k_nonce_bytes);
  if (!nonce) {
    ::close(fd);
    return;
  }
  auto conn = std::make_unique<Connection>();
  conn->fd = Fd(fd);
  conn->serial = next_serial++;
  conn->peer = std::move(peer);
  conn->nonce = std::move(*nonce);
  conn->handshake_deadline = Clock::now() + options.handshake_timeout;
  watch_deadline(conn->handshake_deadline);
  epoll_set(epoll.get(), EPOLL_CTL_ADD, fd, EPOLLIN, static_cast<std::uint64_t>(fd));
  Connection& ref = *conn;
  connections.insert_or_assign(fd, std::move(conn));
  handshaking.emplace_back(ref.serial, fd);
  ++handshaking_count;
  ++handshaking_per_peer[ref.peer];
  queue(ref, FrameWriter(MsgType::hello).u32(k_protocol_version).raw(ref.nonce).finish());
}

// Closes the oldest connection that has not joined, of the address that holds
// the most of them: one address's strays cannot crowd out another's ranks,
// and a real rank (which joins within a round trip) outlives idle strays.
bool Server::Impl::evict_a_stranger() {
  auto live = [this](const std::pair<std::uint64_t, int>& entry) -> Connection* {
    Connection* conn = connection_of(entry.second);
    return conn && conn->serial == entry.first && conn->handshaking && !conn->doomed ? conn : nullptr;
  };
  while (!handshaking.empty() && !live(handshaking.front())) handshaking.pop_front();
  std::size_t most = 0;
  for (const auto& [peer, count] : handshaking_per_peer) most = std::max(most, count);
  for (const auto& entry : handshaking) {
    Connection* conn = live(entry);
    if (!conn || handshaking_per_peer[conn->peer] != most) continue;
    spdlog::debug("rendezvous: dropped the oldest connection not yet joined: {} are open",
                  handshaking_count);
    handshake_over(*conn);
    doom(*conn);
    close_doomed();
    return true;
  }
  return false;
}

// The connection has joined or is closing: it no longer counts as a stranger.
void Server::Impl::handshake_over(Connection& conn) {
  if (!conn.handshaking) return;
  conn.handshaking = false;
  --handshaking_count;
  auto found = handshaking_per_peer.find(conn.peer);
  if (found != handshaking_per_peer.end() && --found->second == 0) handshaking_per_peer.erase(found);
}

void Server::Impl::pause_accepting() {
  spdlog::warn("rendezvous: accept: {} (raise the open file limit)", std::strerror(errno));
  accept_paused_until = Clock::now() + Millis(100);
  watch_deadline(accept_paused_until);
  epoll_set(epoll.get(), EPOLL_CTL_DEL, server.listener(), 0, k_listener_tag);
}

void Server::Impl::on_readable(Connection& conn) {
  std::vector<char>& buffer = read_buffer;
  for (;;) {
    ssize_t got = ::recv(conn.fd.get(), buffer.data(), buffer.size(), 0);
    if (got == 0) {
      doom(conn);
      return;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) doom(conn);
      return;
    }
    if (conn.closing) continue;  // draining what it still sends; its answer is queued
    conn.in.append(buffer.data(), static_cast<std::size_t>(got));
    conn.corked = true;
    take_frames(conn);
    conn.corked = false;
    // A client that sent a request behind another (BARRIER right behind JOIN)
    // reads the first reply only after the second: the earlier replies go out
    // with the answer it waits for, in one send.
    if (!conn.doomed && conn.pending == Pending::none) flush(conn);
    if (static_cast<std::size_t>(got) < buffer.size()) return;
  }
}

// Handles every whole frame read so far.
void Server::Impl::take_frames(Connection& conn) {
  std::size_t used = 0;
  while (!conn.closing && !conn.doomed && conn.in.size() - used >= 4) {
    std::size_t size = read_be32(conn.in.data() + used);
    std::size_t cap = conn.rank < 0 ? k_max_join_frame : options.max_message;
    if (size == 0 || size > cap) {
      conn.in.clear();
      refuse(conn, ErrorKind::bad_request,
             fmt::format("frame of {} bytes: must be 1 to {} bytes", size, cap));
      return;
    }
    if (conn.in.size() - used - 4 < size) break;
    handle_frame(conn, std::string_view(conn.in).substr(used + 4, size));
    used += 4 + size;
  }
  if (conn.closing || conn.doomed) {
    conn.in.clear();
  } else {
    conn.in.erase(0, used);
  }
}

void Server::Impl::queue(Connection& conn, std::string frame) {
  queue(conn, std::make_shared<const std::string>(std::move(frame)));
}

void Server::Impl::queue(Connection& conn, std::shared_ptr<const std::string> frame) {
  if (conn.doomed) return;
  conn.out_bytes += frame->size();
  conn.out.push_back(std::move(frame));
  if (!conn.corked) flush(conn);
  if (!conn.doomed &&
      (conn.out_bytes > options.max_queued_bytes || conn.out.size() > options.max_queued_frames)) {
    spdlog::warn("rendezvous: dropped {}: {} replies ({} bytes) queued that it does not read",
                 conn.rank >= 0 ? fmt::format("rank {}'s connection", conn.rank) : "a connection",
                 conn.out.size(), conn.out_bytes);
    doom(conn);
  }
}

// Sends what is queued, every frame in one call where the socket takes it.
void Server::Impl::flush(Connection& conn) {
  constexpr std::size_t k_frames_per_send = 64;
  while (!conn.out.empty()) {
    std::array<iovec, k_frames_per_send> parts{};
    std::size_t count = 0;
    for (const auto& frame : conn.out) {
      if (count == parts.size()) break;
      std::size_t skip = count == 0 ? conn.out_offset : 0;
      parts[count++] = {const_cast<char*>(frame->data()) + skip, frame->size() - skip};
    }
    msghdr message{};
    message.msg_iov = parts.data();
    message.msg_iovlen = count;
    ssize_t sent = ::sendmsg(conn.fd.get(), &message, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      doom(conn);
      return;
    }
    conn.out_bytes -= static_cast<std::size_t>(sent);
    auto left = static_cast<std::size_t>(sent);
    while (left > 0) {
      std::size_t rest = conn.out.front()->size() - conn.out_offset;
      if (left < rest) {
        conn.out_offset += left;
        break;
      }
      left -= rest;
      conn.out.pop_front();
      conn.out_offset = 0;
    }
  }
  if (conn.out.empty() && conn.closing) {
    doom(conn);
    return;
  }
  bool want_write = !conn.out.empty();
  if (want_write != conn.write_armed) {
    conn.write_armed = want_write;
    epoll_set(epoll.get(), EPOLL_CTL_MOD, conn.fd.get(),
              EPOLLIN | (want_write ? EPOLLOUT : 0u), static_cast<std::uint64_t>(conn.fd.get()));
  }
}

void Server::Impl::doom(Connection& conn) {
  if (conn.doomed) return;
  conn.doomed = true;
  doomed.push_back(conn.fd.get());
}

void Server::Impl::close_doomed() {
  while (!doomed.empty()) {
    int fd = doomed.back();
    doomed.pop_back();
    auto found = connections.find(fd);
    if (found == connections.end()) continue;
    std::unique_ptr<Connection> conn = std::move(found->second);
    connections.erase(found);
    handshake_over(*conn);
    int rank = conn->rank;
    bool died = !conn->left;
    conn.reset();  // closes the socket
    if (rank >= 0 && rank_fd[static_cast<std::size_t>(rank)] == fd) rank_lost(rank, died);
  }
}

void Server::Impl::watch_deadline(Clock::time_point when) {
  next_deadline = std::min(next_deadline, when);
}

void Server::Impl::check_deadlines(Clock::time_point now) {
  next_deadline = Clock::time_point::max();
  if (accept_paused_until != Clock::time_point{}) {
    if (now >= accept_paused_until) {
      accept_paused_until = {};
      epoll_set(epoll.get(), EPOLL_CTL_ADD, server.listener(), EPOLLIN, k_listener_tag);
    } else {
      watch_deadline(accept_paused_until);
    }
  }
  for (auto& [fd, conn] : connections) {
    if (conn->doomed) continue;
    if (conn->rank < 0) {
      if (now >= conn->handshake_deadline) {
        spdlog::debug("rendezvous: dropped a connection that did not join within {}",
                      format_duration(options.handshake_timeout));
        doom(*conn);
      } else {
        watch_deadline(conn->handshake_deadline);
      }
    } else if (conn->pending == Pending::get) {
      if (now >= conn->get_deadline) {
        conn->pending = Pending::none;
        reply_error(*conn, ErrorKind::timed_out,
                    fmt::format("timed out after {} waiting for key '{}'",
                                format_duration(conn->get_timeout), conn->get_key));
      } else {
        watch_deadline(conn->get_deadline);
      }
    }
  }
}

} // namespace ddl::rendezvous
