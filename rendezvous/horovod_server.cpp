// SPDX-License-Identifier: MIT
#include "rendezvous/horovod_server.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "rendezvous/protocol.hpp"
#include "src/util/net.hpp"
#include "src/util/socket_server.hpp"

namespace ddl::rendezvous {

using net::Clock;
using net::Fd;

namespace {

struct HttpConnection {
  Fd fd;
  std::string peer;  // numeric address
  std::string in;
  std::string out;  // the response, once there is one
  std::size_t sent = 0;
  bool answering = false;
  bool head_done = false;
  Clock::time_point accepted;
  Clock::time_point deadline;
};

// Best effort, on a connection about to be closed.
void send_now(int fd, const HttpResponse& response) {
  std::string text = format_http_response(response);
  [[maybe_unused]] auto sent = ::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void answer(HttpConnection& conn, const HttpResponse& response) {
  conn.out = format_http_response(response);
  conn.sent = 0;
  conn.answering = true;
  conn.in.clear();
}

} // namespace

struct HorovodServer::Impl {
  HorovodServerOptions options;
  SocketServer server;  // its listening socket, thread and wake-up
  std::mutex mutex;     // store
  std::optional<HorovodStore> store;
  std::vector<std::unique_ptr<HttpConnection>> connections;  // in the order accepted
  std::map<std::string, int> per_peer;  // open connections per address
  std::set<std::string> refused_said;   // addresses already warned about

  void run();
  void accept_all();
  void refuse(int fd, const std::string& peer);
  void make_room(const std::string& peer);
  bool evict_oldest_of(const std::string& peer);
  void forget(const HttpConnection& conn);
  // False when the connection is done with (to be closed).
  bool on_readable(HttpConnection& conn);
  bool on_writable(HttpConnection& conn);
  int poll_timeout(Clock::time_point now) const;
};

HorovodServer::HorovodServer() : impl_(std::make_unique<Impl>()) {}
HorovodServer::~HorovodServer() { stop(); }

Result<int> HorovodServer::start(const HorovodServerOptions& options) {
  if (impl_->server.running()) return fail(ExitCode::launch, "horovod rendezvous: already started");
  impl_->options = options;
  auto listener = net::listen_tcp(options.bind_address, options.port, 1024, k_net_wording);
  if (!listener) return fail(listener.error());
  if (auto opened = impl_->server.open(std::move(*listener), "horovod rendezvous"); !opened) {
    return fail(opened.error());
  }
  impl_->store.emplace(options.scope_sizes, options.max_store_bytes);
  impl_->server.run([impl = impl_.get()] { impl->run(); });
  return net::local_port(impl_->server.listener());
}

void HorovodServer::stop() {
  if (!impl_->server.running()) return;
  impl_->server.stop();
  impl_->connections.clear();
  impl_->per_peer.clear();
}

void HorovodServer::clear() {
  std::lock_guard lock(impl_->mutex);
  if (impl_->store) impl_->store->clear();
}

int HorovodServer::Impl::poll_timeout(Clock::time_point now) const {
  auto next = Clock::time_point::max();
  for (const auto& conn : connections) next = std::min(next, conn->deadline);
  if (next == Clock::time_point::max()) return -1;
  if (next <= now) return 0;
  return static_cast<int>(std::chrono::duration_cast<Millis>(next - now).count()) + 1;
}

void HorovodServer::Impl::accept_all() {
  // Every one waiting (an error: poll again); past max_connections each is answered 503.
  server.accept_waiting([] { return true; }, [this](int fd, const sockaddr_storage& addr) {
    auto conn = std::make_unique<HttpConnection>();
    conn->fd = Fd(fd);
    conn->peer = net::peer_address(&addr);
    if (!options.allowed_peers.empty() && !options.allowed_peers.contains(conn->peer)) {
      refuse(fd, conn->peer);
      return;
    }
    make_room(conn->peer);
    if (static_cast<int>(connections.size()) >= options.max_connections) {
      send_now(fd, {503, "too many connections\n"});  // every one is being answered
      return;
    }
    conn->accepted = Clock::now();
    conn->deadline = conn->accepted + options.header_timeout;
    ++per_peer[conn->peer];
    connections.push_back(std::move(conn));
  });
}

void HorovodServer::Impl::refuse(int fd, const std::string& peer) {
  send_now(fd, {403, "only the hosts of this job's ranks may use its rendezvous\n"});
  if (refused_said.size() < 16 && refused_said.insert(peer).second) {
    spdlog::warn("horovod rendezvous: refused a connection from {}: not the address of a host of this job's ranks",
                 peer);
  }
}

// Room for one more connection from `peer`: past max_per_address it costs
// `peer` its oldest connection still sending a request, past max_connections
// the address holding the most pays the same.
void HorovodServer::Impl::make_room(const std::string& peer) {
  if (per_peer[peer] >= options.max_per_address) {
    evict_oldest_of(peer);
    return;
  }
  if (static_cast<int>(connections.size()) >= options.max_connections) {
    auto busiest = std::ranges::max_element(per_peer, {}, [](const auto& entry) { return entry.second; });
    if (busiest != per_peer.end()) evict_oldest_of(busiest->first);
  }
}

bool HorovodServer::Impl::evict_oldest_of(const std::string& peer) {
  auto oldest = std::ranges::find_if(connections, [&](const auto& conn) { return conn->peer == peer && !conn->answering; });
  if (oldest == connections.end()) return false;
  spdlog::debug("horovod rendezvous: closed the oldest unfinished request from {} ({} connections open)", peer,
                connections.size());
  forget(**oldest);
  connections.erase(oldest);
  return true;
}

void HorovodServer::Impl::forget(const HttpConnection& conn) {
  auto entry = per_peer.find(conn.peer);
  if (entry != per_peer.end() && --entry->second <= 0) per_peer.erase(entry);
}

bool HorovodServer::Impl::on_readable(HttpConnection& conn) {
  std::array<char, 16 * 1024> chunk{};
  for (;;) {
    ssize_t got = ::recv(conn.fd.get(), chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    conn.in.append(chunk.data(), static_cast<std::size_t>(got));
    if (!conn.head_done && http_head_complete(conn.in)) {
      conn.head_done = true;  // the body may take longer than the head
      conn.deadline = conn.accepted + options.request_timeout;
    }
    HttpParsed parsed = parse_http_request(conn.in, options.limits);
    if (parsed.end == HttpParse::refused) {
      answer(conn, {parsed.status, parsed.why + "\n"});
      return on_writable(conn);
    }
    if (parsed.end == HttpParse::complete) {
      HttpResponse response;
      {
        std::lock_guard lock(mutex);
        response = store->handle(parsed.request);
      }
      answer(conn, response);
      return on_writable(conn);
    }
  }
}

bool HorovodServer::Impl::on_writable(HttpConnection& conn) {
  while (conn.sent < conn.out.size()) {
    ssize_t put = ::send(conn.fd.get(), conn.out.data() + conn.sent, conn.out.size() - conn.sent,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
    if (put < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    conn.sent += static_cast<std::size_t>(put);
  }
  return false;  // all sent: HTTP/1.0, the connection ends here
}

void HorovodServer::Impl::run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({server.wake_fd(), POLLIN, 0});
    fds.push_back({server.listener(), POLLIN, 0});
    for (const auto& conn : connections) {
      fds.push_back({conn->fd.get(), static_cast<short>(conn->answering ? POLLOUT : POLLIN), 0});
    }
    int ready = ::poll(fds.data(), fds.size(), poll_timeout(Clock::now()));
    if (ready < 0 && errno != EINTR) {
      spdlog::error("horovod rendezvous: poll: {}", std::strerror(errno));
      return;
    }
    if (server.stopping()) return;
    const auto now = Clock::now();
    std::vector<bool> keep(connections.size(), true);
    for (std::size_t i = 0; i < connections.size(); ++i) {
      HttpConnection& conn = *connections[i];
      const short events = fds[i + 2].revents;
      if ((events & (POLLERR | POLLNVAL)) != 0) {
        keep[i] = false;
      } else if (conn.answering && (events & (POLLOUT | POLLHUP)) != 0) {
        keep[i] = on_writable(conn);
      } else if (!conn.answering && (events & (POLLIN | POLLHUP)) != 0) {
        keep[i] = on_readable(conn);
      }
      if (keep[i] && conn.deadline <= now) {
        if (conn.answering) {
          keep[i] = false;  // a reader that never reads its answer
        } else {
          answer(conn, {408, "the request did not arrive in time\n"});
          conn.deadline = now + options.request_timeout;
          keep[i] = on_writable(conn);
        }
      }
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < connections.size(); ++i) {
      if (keep[i]) {
        connections[kept++] = std::move(connections[i]);
      } else {
        forget(*connections[i]);
      }
    }
    connections.resize(kept);
    if ((fds[1].revents & POLLIN) != 0) accept_all();
  }
}

std::set<std::string> horovod_peer_addresses(const Plan& plan) {
  std::set<std::string> peers;
  for (const Host& host : plan.hosts) {
    if (net::is_this_machine(host.address)) {
      peers.insert({"127.0.0.1", "::1"});
      peers.merge(net::local_addresses());
    } else {
      peers.merge(net::addresses_of(host.address));
    }
  }
  return peers;
}

} // namespace ddl::rendezvous
