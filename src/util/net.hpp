// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <string_view>

#include "src/util/error.hpp"

// The one TCP layer: the rendezvous (server, client) and the allreduce ring
// both listen, dial and move bytes through it. Callers word their own errors:
// listen and dial take a Wording, send and receive return an IoStatus.
namespace ddl::net {

using Clock = std::chrono::steady_clock;

// An owned file descriptor.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release();
  void reset();
  explicit operator bool() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

// How listen and dial errors read: "<prefix>cannot connect to host:port: why"
// and "cannot resolve <address_noun>'host': why".
struct Wording {
  std::string_view prefix;
  std::string_view address_noun;
};

// A non-blocking, CLOEXEC listening TCP socket on host:port (port 0: any free).
// A busy port is an error naming addr:port. Accepted sockets are blocking.
Result<Fd> listen_tcp(const std::string& host, int port, int backlog, const Wording& wording = {});
// The port and the numeric address a socket is bound to (0 and "" if unknown).
int local_port(int fd);
std::string local_address(int fd);

// torch.master_port and the ports derived from it (JAX's coordinator takes
// master_port + 1): a run of `count` consecutive TCP ports.
//
// On this machine, by binding them on the wildcard address, as torch's store
// listens: `first` 0 finds a free run (an ephemeral port from the kernel);
// else the run from `first` is checked, and a port in use is an error
// (ExitCode::launch) naming it. Best effort: the ports are released before
// the ranks bind them.
Result<int> free_ports_here(int first, int count);

// The local ports of every socket listed in the text of /proc/net/tcp and
// /proc/net/tcp6 in any state but TIME_WAIT: the ports in use on the host
// that printed it.
std::set<int> ports_in_proc_net_tcp(std::string_view text);

// A run of `count` consecutive ports in [20000, 32767] (below Linux's
// ephemeral range) none of which is in `used`, picked at random; 0 when
// none is left.
int pick_unused_ports(const std::set<int>& used, int count);

// A connected non-blocking CLOEXEC socket with TCP_NODELAY; a refused
// connection is retried (10 ms, doubling up to 500 ms) until `deadline`.
Result<Fd> dial_tcp(const std::string& host, int port, Clock::time_point deadline,
                    const Wording& wording = {});

// How a send, receive or accept ended; `error` is the errno of `call` when failed.
enum class IoEnd { done, timed_out, closed, failed };
struct IoStatus {
  IoEnd end = IoEnd::done;
  int error = 0;
  std::string_view call;
  explicit operator bool() const { return end == IoEnd::done; }
};

// Exact-length I/O bounded by `deadline`, on blocking and non-blocking sockets
// alike (each call is MSG_DONTWAIT and waits in poll).
IoStatus send_all(int fd, std::string_view bytes, Clock::time_point deadline);
IoStatus recv_exact(int fd, char* into, std::size_t size, Clock::time_point deadline);
// One connection accepted on `listen_fd` into `into` (a blocking CLOEXEC socket).
IoStatus accept_one(int listen_fd, Fd& into, Clock::time_point deadline);

// TCP_NODELAY; SO_SNDBUF set to `send_buffer` when positive (the kernel caps it
// at net.core.wmem_max). SO_RCVBUF is left alone so receive autotuning stays on.
void tune_socket(int fd, int send_buffer);
void set_nonblocking(int fd);

// The local address the kernel would use to reach `host` ("[v6]" brackets
// allowed); no packet is sent. `why` says what failed when `address` is empty.
enum class RouteEnd { found, unresolved, unroutable, unnamed };
struct Route {
  RouteEnd end = RouteEnd::found;
  std::string address;
  std::string why;
};
Route route_to(const std::string& host);
// The interface holding the numeric `address` ("eth0"), "" when none does.
std::string interface_holding(const std::string& address);
// Whether `host` is "localhost" or resolves to a loopback address.
bool is_loopback(const std::string& host);
// This machine's host name (gethostname); "" when it has none.
std::string own_hostname();

// Whether `host` names this machine: "localhost", this machine's host name
// (or its first label), or a name or address ("[v6]" allowed) all of whose
// addresses are loopback (127.0.0.0/8, ::1) or this machine's interfaces'.
// A name that does not resolve is not this machine.
bool is_this_machine(const std::string& host);
// The numeric addresses `host` ("[v6]" allowed) resolves to; none when it
// does not resolve.
std::set<std::string> addresses_of(const std::string& host);
// Every address of this machine's interfaces, loopback included, numeric.
std::set<std::string> local_addresses();
// The numeric address of an accepted peer (`addr` a sockaddr_storage); an
// IPv4-mapped IPv6 address as its IPv4 form; "" for other families.
std::string peer_address(const void* addr);

// "host:port" or "[v6addr]:port" -> host and port.
struct Endpoint {
  std::string host;
  int port = 0;
};
Result<Endpoint> parse_endpoint(std::string_view text);
std::string format_endpoint(std::string_view host, int port);

} // namespace ddl::net
