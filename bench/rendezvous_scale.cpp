// SPDX-License-Identifier: MIT
// bench/rendezvous-scale: N simulated workers join the rendezvous, meet at a
// barrier and allgather their addresses. The server runs on its own thread as
// it does inside `ddl run`; the workers are non-blocking state machines on
// one epoll loop per worker process, at most 8192 per process (one process
// here may hold at most 20000 files), each keeping at most 512 connects in
// flight (the kernel's accept queue, somaxconn, is 4096 here). Each worker
// sends BARRIER right behind its JOIN, as the protocol allows; --serial-join
// waits for the join's OK first, as ddl's own client does. Prints one line
// per N: the time to all joined (serial joins only), barrier done, allgather
// done; the launcher's peak RSS; the allgather's bytes delivered per second
// beside this machine's memcpy rate.
//
//   rendezvous-scale [--serial-join] [--no-allgather] [--per-host K] [N...]
//                                (default: 256 1024 4096 16384)
//
// --per-host K: a prototype of a hierarchical gather, where one process per
// host (ddl's relay) would join for its host's K workers and hand them the
// answer: N members each contribute K workers' addresses (comma-joined), so
// that the server's side of N x K workers is measured (the hand-over on each
// host, a local copy of the answer, is not).

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

constexpr int k_workers_per_process = 8192;
constexpr int k_connects_in_flight = 512;
// On a cluster the workers run on hosts of their own; here they share two
// cores with the server, so they yield to it.
constexpr int k_worker_niceness = 5;

struct Mode {
  bool serial_join = false;  // wait for the join's OK before BARRIER
  bool allgather = true;
  int per_host = 1;          // workers each member contributes for
};

// What member `rank` contributes to the allgather: its workers' addresses.
std::string contribution(int rank, int per_host) {
  std::string value;
  for (int k = 0; k < per_host; ++k) {
    int worker = rank * per_host + k;
    value += (k == 0 ? "" : ",") + ("10.0." + std::to_string(worker / 256) + "." + std::to_string(worker % 256) +
                                    ":29500");
  }
  return value;
}

// Steady-clock nanoseconds (one clock for every process of this machine).
struct Stamps {
  long long joined = 0;
  long long barrier = 0;
  long long allgather = 0;
};

struct Timings {
  double joined_ms = 0;
  double barrier_ms = 0;
  double allgather_ms = 0;
  std::size_t values_bytes = 0;  // one VALUES frame
};

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
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

// How many of one process's workers reached each step.
struct Counts {
  int join_sent = 0;
  int joined = 0;  // serial joins only: with BARRIER behind JOIN, the OKs come together
  int past_barrier = 0;
  int done = 0;
};

// Advances one worker by one frame; returns false on a protocol error.
bool on_frame(Worker& worker, std::string_view payload, const std::string& token, int world,
              const Mode& mode, Counts& counts) {
  FrameReader reader(payload);
  auto w = static_cast<std::uint32_t>(world);
  auto r = static_cast<std::uint32_t>(worker.rank);
  switch (worker.step) {
    case Step::hello: {
      (void)reader.u32();
      auto nonce = reader.raw(k_nonce_bytes);
      if (reader.type() != MsgType::hello || !nonce) return false;
      std::string join = FrameWriter(MsgType::join).u32(r).u32(w).bytes("bench")
                             .raw(join_mac(token, *nonce, r, w, "bench")).finish();
      if (!mode.serial_join) join += FrameWriter(MsgType::barrier).finish();
      send_frame(worker, join);
      worker.step = Step::joined;
      ++counts.join_sent;
      return true;
    }
    case Step::joined:
      if (reader.type() != MsgType::ok) return false;
      if (mode.serial_join) {
        send_frame(worker, FrameWriter(MsgType::barrier).finish());
        ++counts.joined;
      }
      worker.step = Step::barrier;
      return true;
    case Step::barrier:
      if (reader.type() != MsgType::ok) return false;
      ++counts.past_barrier;
      if (!mode.allgather) {
        worker.step = Step::done;
        ++counts.done;
        return true;
      }
      send_frame(worker, FrameWriter(MsgType::allgather).bytes(contribution(worker.rank, mode.per_host)).finish());
      worker.step = Step::allgather;
      return true;
    case Step::allgather: {
      auto count = reader.u32();
      if (reader.type() != MsgType::values || count != w) return false;
      worker.step = Step::done;
      ++counts.done;
      return true;
    }
    case Step::done: return false;
  }
  return false;
}

// Workers come from hosts of 8 ranks each, as on a real cluster: one
// loopback source address per 8 ranks. From a single address, 16384
// connections to one port make the kernel's search for a free source port
// (__inet_hash_connect) the cost being measured instead of the rendezvous.
bool bind_source(int fd, int rank) {
  int on = 1;
  ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof on);
  const auto host = static_cast<std::uint32_t>(rank / 8);
  sockaddr_in source{};
  source.sin_family = AF_INET;
  source.sin_addr.s_addr = htonl((127U << 24) | (1U << 16) | (host & 0xffffU));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&source), sizeof source) != 0) {
    std::fprintf(stderr, "rendezvous-scale: bind: %s\n", std::strerror(errno));
    return false;
  }
  return true;
}

bool dial(Worker& worker, const sockaddr_in& addr, int epoll) {
  worker.fd = Fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!bind_source(worker.fd.get(), worker.rank)) return false;
  if (connect(worker.fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 &&
      errno != EINPROGRESS) {
    std::fprintf(stderr, "rendezvous-scale: connect: %s\n", std::strerror(errno));
    return false;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = static_cast<std::uint32_t>(worker.rank);
  epoll_ctl(epoll, EPOLL_CTL_ADD, worker.fd.get(), &ev);
  return true;
}

// Ranks [first, first + count) of `world`, in this process; stamps when the
// last of them has joined, passed the barrier, got the allgather.
std::optional<Stamps> run_workers(int first, int count, int world, int port, const std::string& token,
                                  const Mode& mode) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  Fd epoll(epoll_create1(EPOLL_CLOEXEC));
  std::vector<Worker> workers(static_cast<std::size_t>(count));
  int dialed = 0;
  Counts counts;
  auto dial_more = [&] {
    while (dialed < count && dialed - counts.join_sent < k_connects_in_flight) {
      Worker& worker = workers[static_cast<std::size_t>(dialed)];
      worker.rank = dialed;
      if (!dial(worker, addr, epoll.get())) return false;
      ++dialed;
    }
    return true;
  };
  Stamps stamps;
  std::array<epoll_event, 512> events{};
  std::vector<char> buffer(1 << 20);
  auto deadline = Clock::now() + std::chrono::seconds(120);
  if (!dial_more()) return std::nullopt;
  while (counts.done < count) {
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "rendezvous-scale: stuck at %d joins sent, %d past the barrier, %d done\n",
                   counts.join_sent, counts.past_barrier, counts.done);
      return std::nullopt;
    }
    int n = epoll_wait(epoll.get(), events.data(), static_cast<int>(events.size()), 1000);
    for (int i = 0; i < n; ++i) {
      Worker& worker = workers[events[static_cast<std::size_t>(i)].data.u32];
      ssize_t got = recv(worker.fd.get(), buffer.data(), buffer.size(), 0);
      if (got <= 0) {
        if (got < 0 && errno == EAGAIN) continue;
        std::fprintf(stderr, "rendezvous-scale: rank %d lost its connection\n", first + worker.rank);
        return std::nullopt;
      }
      worker.in.append(buffer.data(), static_cast<std::size_t>(got));
      while (worker.in.size() >= 4) {
        std::size_t size = read_be32(worker.in.data());
        if (worker.in.size() < 4 + size) break;
        Worker as_rank = {Fd(), first + worker.rank, worker.step, {}};
        as_rank.fd = std::move(worker.fd);
        bool ok = on_frame(as_rank, std::string_view(worker.in).substr(4, size), token, world, mode, counts);
        worker.fd = std::move(as_rank.fd);
        worker.step = as_rank.step;
        if (!ok) {
          FrameReader error(std::string_view(worker.in).substr(4, size));
          (void)error.u32();
          std::string text(error.type() == MsgType::error ? error.bytes().value_or("") : "");
          std::fprintf(stderr, "rendezvous-scale: rank %d: unexpected frame %s\n", first + worker.rank,
                       text.c_str());
          return std::nullopt;
        }
        worker.in.erase(0, 4 + size);
      }
    }
    if (!dial_more()) return std::nullopt;
    if (mode.serial_join && counts.joined == count && stamps.joined == 0) stamps.joined = now_ns();
    if (counts.past_barrier == count && stamps.barrier == 0) stamps.barrier = now_ns();
  }
  stamps.allgather = now_ns();
  return stamps;
}

// A worker process: reads the port, runs its ranks, writes its Stamps.
[[noreturn]] void worker_process(int first, int count, int world, const std::string& token,
                                 const Mode& mode, int go, int result) {
  int port = 0;
  errno = 0;
  if (::nice(k_worker_niceness) == -1 && errno != 0) _exit(1);
  if (read(go, &port, sizeof port) != sizeof port) _exit(1);
  auto stamps = run_workers(first, count, world, port, token, mode);
  if (!stamps || write(result, &*stamps, sizeof *stamps) != sizeof *stamps) _exit(1);
  _exit(0);
}

std::optional<Timings> run_once(int world, const Mode& mode) {
  std::string token = generate_token().value_or(std::string(64, '0'));
  // The worker processes first, before the server's thread exists.
  struct Child { pid_t pid; int go; int result; };
  std::vector<Child> children;
  for (int first = 0; first < world; first += k_workers_per_process) {
    int count = std::min(k_workers_per_process, world - first);
    int go[2];
    int result[2];
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(result, O_CLOEXEC) != 0) return std::nullopt;
    pid_t pid = fork();
    if (pid == 0) worker_process(first, count, world, token, mode, go[0], result[1]);
    close(go[0]);
    close(result[1]);
    children.push_back({pid, go[1], result[0]});
  }
  ServerOptions options;
  options.token = token;
  options.world_size = world;
  options.job = "bench";
  if (const char* ms = std::getenv("HANDSHAKE_MS")) options.handshake_timeout = Millis(std::atoi(ms));
  Server server;
  auto endpoint = server.start(options);
  if (!endpoint) {
    std::fprintf(stderr, "rendezvous-scale: %s\n", endpoint.error().message.c_str());
    return std::nullopt;
  }
  int port = net::parse_endpoint(*endpoint)->port;
  long long start = now_ns();
  for (const Child& child : children) {
    if (write(child.go, &port, sizeof port) != sizeof port) return std::nullopt;
  }
  Stamps last;
  bool ok = true;
  for (const Child& child : children) {
    Stamps stamps;
    ok = read(child.result, &stamps, sizeof stamps) == sizeof stamps && ok;
    last.joined = std::max(last.joined, stamps.joined);
    last.barrier = std::max(last.barrier, stamps.barrier);
    last.allgather = std::max(last.allgather, stamps.allgather);
    close(child.go);
    close(child.result);
    waitpid(child.pid, nullptr, 0);
  }
  if (!ok) return std::nullopt;
  auto ms = [start](long long at) { return static_cast<double>(at - start) / 1e6; };
  Timings timings{ms(last.joined), ms(last.barrier), ms(last.allgather), 0};
  // One VALUES frame: prefix, type, count, then each rank's address as bytes.
  timings.values_bytes = 4 + 1 + 4;
  for (int rank = 0; rank < world; ++rank) {
    timings.values_bytes += 4 + contribution(rank, mode.per_host).size();
  }
  return timings;
}

// This process's peak resident set (VmHWM), in MiB.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word) {
    if (word == "VmHWM:") {
      double kib = 0;
      status >> kib;
      return kib / 1024;
    }
  }
  return 0;
}

// memcpy of 64 MiB, best of 5, in GB/s: what "bytes delivered" compares to.
double memcpy_gb_per_s() {
  std::vector<char> from(64u << 20, 'x');
  std::vector<char> to(from.size());
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    std::memcpy(to.data(), from.data(), from.size());
    double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, static_cast<double>(from.size()) / s / 1e9);
  }
  return to[12345] == 'x' ? best : 0;
}

// "-" where a column was not measured.
std::string cell(bool measured, double value, int width, int decimals) {
  if (!measured) return std::string(static_cast<std::size_t>(width - 1), ' ') + "-";
  char text[64];
  std::snprintf(text, sizeof text, "%*.*f", width, decimals, value);
  return text;
}

} // namespace

int main(int argc, char** argv) {
  Mode mode;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--serial-join") {
      mode.serial_join = true;
      continue;
    }
    if (arg == "--no-allgather") {
      mode.allgather = false;
      continue;
    }
    if (arg == "--per-host" && i + 1 < argc) {
      auto k = parse_int(argv[++i]);
      if (!k || *k < 1 || *k > 256) {
        std::fprintf(stderr, "rendezvous-scale: --per-host takes 1 to 256\n");
        return 2;
      }
      mode.per_host = static_cast<int>(*k);
      continue;
    }
    auto n = parse_int(arg);
    if (!n || *n < 1 || *n > 30000) {
      std::fprintf(stderr,
                   "usage: rendezvous-scale [--serial-join] [--no-allgather] [--per-host K] [N...]  (1 <= N <= 30000)\n");
      return 2;
    }
    sizes.push_back(static_cast<int>(*n));
  }
  if (sizes.empty()) sizes = {256, 1024, 4096, 16384};
  if (mode.per_host > 1) {
    std::printf("--per-host %d: each member below joins for %d workers (their addresses in one value)\n",
                mode.per_host, mode.per_host);
  }
  std::printf("%8s %11s %12s %14s %12s %16s\n", mode.per_host > 1 ? "members" : "workers", "joined(ms)", "barrier(ms)", "allgather(ms)",
              "peakRSS(MiB)", "allgather(GB/s)");
  for (int world : sizes) {
    // The server's end of every connection, plus spares (workers live in
    // processes of their own).
    auto needed = static_cast<std::size_t>(world + 512);
    if (!raise_fd_limit(needed)) {
      std::fprintf(stderr, "rendezvous-scale: %d workers need %zu open files; raise ulimit -n\n",
                   world, needed);
      return 1;
    }
    auto timings = run_once(world, mode);
    if (!timings) return 1;
    double gather_s = (timings->allgather_ms - timings->barrier_ms) / 1e3;
    double delivered = static_cast<double>(timings->values_bytes) * world;
    std::printf("%8d %s %12.1f %s %12.1f %s\n", world,
                cell(mode.serial_join, timings->joined_ms, 11, 1).c_str(), timings->barrier_ms,
                cell(mode.allgather, timings->allgather_ms, 14, 1).c_str(), peak_rss_mib(),
                cell(mode.allgather, delivered / gather_s / 1e9, 16, 3).c_str());
    std::fflush(stdout);
  }
  // Last, so that its buffers do not count in the launcher's peak RSS.
  std::printf("memcpy on this machine: %.1f GB/s\n", memcpy_gb_per_s());
  return 0;
}
