// SPDX-License-Identifier: MIT
// bench/rendezvous-scale: N simulated workers join the rendezvous, meet at a
// barrier and allgather their addresses. The workers are non-blocking state
// machines on one epoll thread, the server runs on its own thread as it does
// inside `ddl run`. Prints one line per N: the time to all joined, barrier
// done, allgather done.
//
//   rendezvous-scale [N...]      (default: 256 1024 4096)

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "rendezvous/protocol.hpp"
#include "rendezvous/server.hpp"
#include "src/util/net.hpp"
#include "src/util/text.hpp"

using namespace ddl;
using namespace ddl::rendezvous;

namespace {

enum class Step { hello, joined, barrier, allgather, done };

struct Worker {
  Fd fd;
  int rank = 0;
  Step step = Step::hello;
  std::string in;
};

struct Timings {
  double joined_ms = 0;
  double barrier_ms = 0;
  double allgather_ms = 0;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool raise_fd_limit(std::size_t needed) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur >= needed) return true;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, needed);
  setrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur >= needed;
}

void send_frame(Worker& worker, const std::string& frame) {
  // Small frames on a fresh socket: the kernel buffer always has room.
  (void)net::send_all(worker.fd.get(), frame, Clock::now() + std::chrono::seconds(10));
}

// Advances one worker by one frame; returns false on a protocol error.
bool on_frame(Worker& worker, std::string_view payload, const std::string& token, int world,
              std::vector<int>& counts) {
  FrameReader reader(payload);
  auto w = static_cast<std::uint32_t>(world);
  auto r = static_cast<std::uint32_t>(worker.rank);
  switch (worker.step) {
    case Step::hello: {
      (void)reader.u32();
      auto nonce = reader.raw(k_nonce_bytes);
      if (reader.type() != MsgType::hello || !nonce) return false;
      send_frame(worker, FrameWriter(MsgType::join).u32(r).u32(w).bytes("bench")
                             .raw(join_mac(token, *nonce, r, w, "bench")).finish());
      worker.step = Step::joined;
      return true;
    }
    case Step::joined:
      if (reader.type() != MsgType::ok) return false;
      send_frame(worker, FrameWriter(MsgType::barrier).finish());
      worker.step = Step::barrier;
      ++counts[0];
      return true;
    case Step::barrier:
      if (reader.type() != MsgType::ok) return false;
      send_frame(worker, FrameWriter(MsgType::allgather)
                             .bytes("10.0." + std::to_string(worker.rank / 256) + "." +
                                    std::to_string(worker.rank % 256) + ":29500")
                             .finish());
      worker.step = Step::allgather;
      ++counts[1];
      return true;
    case Step::allgather: {
      auto count = reader.u32();
      if (reader.type() != MsgType::values || count != w) return false;
      worker.step = Step::done;
      ++counts[2];
      return true;
    }
    case Step::done: return false;
  }
  return false;
}

std::optional<Timings> run_once(int world) {
  std::string token = generate_token().value_or(std::string(64, '0'));
  ServerOptions options;
  options.token = token;
  options.world_size = world;
  options.job = "bench";
  Server server;
  auto endpoint = server.start(options);
  if (!endpoint) {
    std::fprintf(stderr, "rendezvous-scale: %s\n", endpoint.error().message.c_str());
    return std::nullopt;
  }
  auto where = net::parse_endpoint(*endpoint);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(where->port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);

  Fd epoll(epoll_create1(EPOLL_CLOEXEC));
  std::vector<Worker> workers(static_cast<std::size_t>(world));
  auto start = Clock::now();
  for (int rank = 0; rank < world; ++rank) {
    Worker& worker = workers[static_cast<std::size_t>(rank)];
    worker.rank = rank;
    worker.fd = Fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (connect(worker.fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
        errno != EINPROGRESS) {
      std::fprintf(stderr, "rendezvous-scale: connect: %s\n", std::strerror(errno));
      return std::nullopt;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<std::uint32_t>(rank);
    epoll_ctl(epoll.get(), EPOLL_CTL_ADD, worker.fd.get(), &ev);
  }
  std::vector<int> counts(3, 0);
  Timings timings;
  std::array<epoll_event, 512> events{};
  std::vector<char> buffer(1 << 20);
  auto deadline = start + std::chrono::seconds(120);
  while (counts[2] < world) {
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "rendezvous-scale: stuck at %d joined, %d barrier, %d allgather\n",
                   counts[0], counts[1], counts[2]);
      return std::nullopt;
    }
    int n = epoll_wait(epoll.get(), events.data(), static_cast<int>(events.size()), 1000);
    for (int i = 0; i < n; ++i) {
      Worker& worker = workers[events[static_cast<std::size_t>(i)].data.u32];
      ssize_t got = recv(worker.fd.get(), buffer.data(), buffer.size(), 0);
      if (got <= 0) {
        if (got < 0 && errno == EAGAIN) continue;
        std::fprintf(stderr, "rendezvous-scale: rank %d lost its connection\n", worker.rank);
        return std::nullopt;
      }
      worker.in.append(buffer.data(), static_cast<std::size_t>(got));
      while (worker.in.size() >= 4) {
        std::size_t size = read_be32(worker.in.data());
        if (worker.in.size() < 4 + size) break;
        if (!on_frame(worker, std::string_view(worker.in).substr(4, size), token, world, counts)) {
          std::fprintf(stderr, "rendezvous-scale: rank %d: unexpected frame\n", worker.rank);
          return std::nullopt;
        }
        worker.in.erase(0, 4 + size);
      }
    }
    if (counts[0] == world && timings.joined_ms == 0) timings.joined_ms = ms_since(start);
    if (counts[1] == world && timings.barrier_ms == 0) timings.barrier_ms = ms_since(start);
  }
  timings.allgather_ms = ms_since(start);
  return timings;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    auto n = parse_int(argv[i]);
    if (!n || *n < 1 || *n > 30000) {
      std::fprintf(stderr, "usage: rendezvous-scale [N...]  (1 <= N <= 30000)\n");
      return 2;
    }
    sizes.push_back(static_cast<int>(*n));
  }
  if (sizes.empty()) sizes = {256, 1024, 4096};
  std::printf("%8s %12s %12s %14s\n", "workers", "joined(ms)", "barrier(ms)", "allgather(ms)");
  for (int world : sizes) {
    // The server's and the workers' ends of every connection, plus spares.
    auto needed = static_cast<std::size_t>(2 * world + 256);
    if (!raise_fd_limit(needed)) {
      std::fprintf(stderr, "rendezvous-scale: %d workers need %zu open files; raise ulimit -n\n",
                   world, needed);
      return 1;
    }
    auto timings = run_once(world);
    if (!timings) return 1;
    std::printf("%8d %12.1f %12.1f %14.1f\n", world, timings->joined_ms, timings->barrier_ms,
                timings->allgather_ms);
    std::fflush(stdout);
  }
  return 0;
}
