// SPDX-License-Identifier: MIT
#include "rendezvous/horovod_server.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "rendezvous/protocol.hpp"
#include "src/util/net.hpp"
#include "src/util/signals.hpp"

namespace ddl::rendezvous {

using net::Clock;
using net::Fd;

namespace {

struct HttpConnection {
  Fd fd;
  std::string in;
  std::string out;  // the response, once there is one
  std::size_t sent = 0;
  bool answering = false;
  Clock::time_point deadline;
};

void answer(HttpConnection& conn, const HttpResponse& response) {
  conn.out = format_http_response(response);
  conn.sent = 0;
  conn.answering = true;
  conn.in.clear();
}

} // namespace

struct HorovodServer::Impl {
  HorovodServerOptions options;
  Fd listener;
  Fd wake;
  std::thread thread;
  std::mutex mutex;  // store and stopping
  std::optional<HorovodStore> store;
  bool stopping = false;
  std::vector<std::unique_ptr<HttpConnection>> connections;

  void run();
  void accept_all();
  // False when the connection is done with (to be closed).
  bool on_readable(HttpConnection& conn);
  bool on_writable(HttpConnection& conn);
  int poll_timeout(Clock::time_point now) const;
};

HorovodServer::HorovodServer() : impl_(std::make_unique<Impl>()) {}
HorovodServer::~HorovodServer() { stop(); }

Result<int> HorovodServer::start(const HorovodServerOptions& options) {
  if (impl_->thread.joinable()) return fail(ExitCode::launch, "horovod rendezvous: already started");
  impl_->options = options;
  auto listener = net::listen_tcp(options.bind_address, options.port, 1024, k_net_wording);
  if (!listener) return fail(listener.error());
  impl_->listener = std::move(*listener);
  impl_->wake = Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!impl_->wake) return fail(ExitCode::launch, fmt::format("horovod rendezvous: {}", std::strerror(errno)));
  impl_->store.emplace(options.scope_sizes, options.max_store_bytes);
  impl_->stopping = false;
  impl_->thread = thread_without_signals([impl = impl_.get()] { impl->run(); });
  return net::local_port(impl_->listener.get());
}

void HorovodServer::stop() {
  if (!impl_->thread.joinable()) return;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  std::uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(impl_->wake.get(), &one, sizeof one);
  impl_->thread.join();
  impl_->connections.clear();
  impl_->listener.reset();
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
  for (;;) {
    int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error: poll again
    auto conn = std::make_unique<HttpConnection>();
    conn->fd = Fd(fd);
    conn->deadline = Clock::now() + options.request_timeout;
    if (static_cast<int>(connections.size()) >= options.max_connections) {
      // Over the cap: answered at once, best effort, and closed.
      std::string busy = format_http_response({503, "too many connections\n"});
      [[maybe_unused]] auto sent = ::send(fd, busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      continue;
    }
    connections.push_back(std::move(conn));
  }
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
    fds.push_back({wake.get(), POLLIN, 0});
    fds.push_back({listener.get(), POLLIN, 0});
    for (const auto& conn : connections) {
      fds.push_back({conn->fd.get(), static_cast<short>(conn->answering ? POLLOUT : POLLIN), 0});
    }
    int ready = ::poll(fds.data(), fds.size(), poll_timeout(Clock::now()));
    if (ready < 0 && errno != EINTR) {
      spdlog::error("horovod rendezvous: poll: {}", std::strerror(errno));
      return;
    }
    {
      std::lock_guard lock(mutex);
      if (stopping) return;
    }
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
      if (keep[i]) connections[kept++] = std::move(connections[i]);
    }
    connections.resize(kept);
    if ((fds[1].revents & POLLIN) != 0) accept_all();
  }
}

} // namespace ddl::rendezvous
