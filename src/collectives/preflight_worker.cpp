// SPDX-License-Identifier: MIT
#include "src/collectives/preflight_worker.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>

#include "src/collectives/bench_worker.hpp"
#include "src/collectives/peer_address.hpp"
#include "src/util/net.hpp"
#include "src/util/text.hpp"

namespace ddl::coll {

namespace {

using Clock = net::Clock;

constexpr std::uint32_t k_magic = 0x44444c50;  // "DDLP"
constexpr int k_max_pings = 16;
constexpr int k_min_pings = 3;
constexpr std::size_t k_chunk = 256 * 1024;
constexpr char k_ping = 'p';
constexpr char k_data = 'd';
// Bytes in flight per stream (the kernel doubles it): enough for a fast
// link's round trip, and little to drain at the end of a slow one's stream.
constexpr int k_send_buffer = 128 << 10;
// How long a connection has to say who it is.
constexpr Millis k_hello_wait{200};

struct Hello {
  std::uint32_t magic = k_magic;
  std::uint32_t rank = 0;
  std::uint64_t cookie = 0;
};

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string io_why(const net::IoStatus& status) {
  switch (status.end) {
  case net::IoEnd::timed_out: return "no answer in time";
  case net::IoEnd::closed: return "the peer closed the connection";
  default: return fmt::format("{}: {}", status.call, std::strerror(status.error));
  }
}

// The received bandwidth in GB/s: the stream's bytes over the time from its
// first byte to its end (a host that gets the CPU a tenth of the time is a
// tenth as fast; a pair that lost the CPU to the others is measured again
// alone by the launcher).
class RateMeter {
public:
  void received(std::size_t bytes, Clock::time_point now) {
    if (total_ == 0) {
      first_ = now;
    }
    total_ += bytes;
    last_ = now;
  }

  double gbps() const {
    const double whole = seconds_between(first_, last_);
    return whole > 0 ? static_cast<double>(total_) / whole / 1e9 : 0;
  }

private:
  std::size_t total_ = 0;
  Clock::time_point first_{};
  Clock::time_point last_{};
};

// Reads until the peer's end of stream, counting; false with `why` on an error.
bool receive_stream(int fd, Clock::time_point deadline, double& gbps, std::string& why) {
  static thread_local std::vector<char> buffer(k_chunk);
  RateMeter meter;
  while (true) {
    const auto now = Clock::now();
    if (now >= deadline) {
      why = "no answer within the budget";
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    if (::poll(&p, 1, static_cast<int>(std::max<long long>(1, left))) < 0 && errno != EINTR) {
      why = fmt::format("poll: {}", std::strerror(errno));
      return false;
    }
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n == 0) {
      gbps = meter.gbps();
      return true;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        continue;
      }
      why = fmt::format("recv: {}", std::strerror(errno));
      return false;
    }
    meter.received(static_cast<std::size_t>(n), Clock::now());
  }
}

// Sends for `window` (or to the deadline), then ends the stream.
bool send_stream(int fd, Millis window, Clock::time_point deadline, std::string& why) {
  static const std::string chunk(k_chunk, '\x5a');
  const auto end = std::min(Clock::now() + window, deadline);
  while (Clock::now() < end) {
    auto sent = net::send_all(fd, chunk, end);
    if (!sent && sent.end != net::IoEnd::timed_out) {
      why = io_why(sent);
      return false;
    }
  }
  ::shutdown(fd, SHUT_WR);
  return true;
}

// The dialing end: pings (the median round trip), its stream, the other's.
PreflightLine measure_as_dialer(int fd, const PreflightPair& pair, Millis window, Clock::time_point deadline) {
  PreflightLine line{pair, false, -1, 0, {}};
  std::vector<double> trips;
  const auto ping_end = Clock::now() + window;
  while (static_cast<int>(trips.size()) < k_max_pings &&
         (static_cast<int>(trips.size()) < k_min_pings || Clock::now() < ping_end)) {
    char byte = k_ping;
    const auto sent_at = Clock::now();
    auto sent = net::send_all(fd, std::string_view(&byte, 1), deadline);
    auto echoed = sent ? net::recv_exact(fd, &byte, 1, deadline) : sent;
    if (!echoed) {
      line.failed = true;
      line.why = io_why(echoed);
      return line;
    }
    trips.push_back(seconds_between(sent_at, Clock::now()) * 1000);
  }
  // The fastest trip: a delay on the link adds to every one, while this
  // machine's scheduler adds to some.
  line.latency_ms = *std::min_element(trips.begin(), trips.end());
  const char data = k_data;
  if (auto sent = net::send_all(fd, std::string_view(&data, 1), deadline); !sent) {
    line.failed = true;
    line.why = io_why(sent);
    return line;
  }
  line.failed = !send_stream(fd, window, deadline, line.why) ||
                !receive_stream(fd, deadline, line.received_gbps, line.why);
  return line;
}

// The accepting end: echoes the pings, takes the dialer's stream, sends its own.
PreflightLine measure_as_acceptor(int fd, const PreflightPair& pair, Millis window, Clock::time_point deadline) {
  PreflightLine line{pair, false, -1, 0, {}};
  char byte = 0;
  while (true) {
    auto got = net::recv_exact(fd, &byte, 1, deadline);
    if (!got) {
      line.failed = true;
      line.why = io_why(got);
      return line;
    }
    if (byte != k_ping) {
      break;
    }
    if (auto echoed = net::send_all(fd, std::string_view(&byte, 1), deadline); !echoed) {
      line.failed = true;
      line.why = io_why(echoed);
      return line;
    }
  }
  line.failed = !receive_stream(fd, deadline, line.received_gbps, line.why) ||
                !send_stream(fd, window, deadline, line.why);
  return line;
}

// One rank's side of the check: its listener, the connections that came in
// before their pair's turn, and the figures so far.
class Checker {
public:
  Checker(const PreflightWorkerOptions& options, const PreflightLinks& links)
      : options_(options), links_(links), deadline_(Clock::now() + options.budget) {}

  Result<int> run() {
    auto address = local_address_towards(links_.rendezvous_host);
    if (!address) {
      return fail(address.error());
    }
    auto listener = net::listen_tcp(*address, 0, 64);
    if (!listener) {
      return fail(listener.error());
    }
    listener_ = std::move(*listener);
    cookie_ = random_cookie();
    const std::string mine = listening_address(listener_.get(), cookie_);
    if (auto set = links_.publish(std::string(k_preflight_address_key) + std::to_string(links_.rank), mine); !set) {
      return fail(set.error());
    }
    wait_for_everyone();
    started_ = Clock::now();
    // Sequential: the list's order, one pair at a time; else round by round.
    const std::vector<std::size_t> rounds =
        options_.sequential ? std::vector<std::size_t>(options_.pairs.size(), 0) : preflight_rounds(options_.pairs);
    rounds_ = rounds.empty() ? 1 : *std::ranges::max_element(rounds) + 1;
    std::vector<std::size_t> turns(options_.pairs.size());
    std::iota(turns.begin(), turns.end(), std::size_t{0});
    std::ranges::stable_sort(turns, {}, [&rounds](std::size_t turn) { return rounds[turn]; });
    for (std::size_t turn : turns) {
      const PreflightPair& pair = options_.pairs[turn];
      if (pair.a != links_.rank && pair.b != links_.rank) {
        continue;
      }
      if (options_.sequential && turn > 0) {
        // Not answered within the while: the pair before is stuck, go on.
        (void)links_.wait_for(turn_key(turn), std::min(remaining(), options_.window * 10 + Millis{500}));
      }
      lines_.push_back(measure(pair, rounds[turn]));
      if (options_.sequential && pair.a == links_.rank) {
        if (auto told = links_.publish(turn_key(turn + 1), "1"); !told) {
          return fail(told.error());
        }
      }
      if (auto published = publish(); !published) {
        return fail(published.error());
      }
    }
    return publish() ? 0 : 3;
  }

private:
  // Every host of the check started (its address published), a bounded
  // while: a pair measured while the others still start shares the CPU
  // with their start. A host later than that is waited for by its pairs.
  void wait_for_everyone() {
    int world = 0;
    for (const PreflightPair& pair : options_.pairs) {
      world = std::max({world, pair.a + 1, pair.b + 1});
    }
    const auto until = std::min(deadline_, Clock::now() + Millis{1'000});
    for (int rank = 0; rank < world; ++rank) {
      const auto left = std::chrono::duration_cast<Millis>(until - Clock::now());
      if (left <= Millis{0} ||
          !links_.wait_for(std::string(k_preflight_address_key) + std::to_string(rank), left)) {
        return;
      }
    }
  }

  // A pair's while: its round's share of the budget left at the start (each
  // round an equal share, to the end of its own), at least the time to
  // measure it (10 windows): a peer held up by a silent host in an earlier
  // round comes to this pair when that round's time is up and still finds
  // this end waiting, and every round fits in the budget. Sequential: one
  // pair's time (1 s + 10 windows) from when this end starts it.
  Clock::time_point pair_until(std::size_t round) const {
    const auto now = Clock::now();
    if (options_.sequential) {
      return std::min(deadline_, now + Millis{1'000} + options_.window * 10);
    }
    const auto each = (deadline_ - started_) / static_cast<long>(rounds_);
    const auto round_end = started_ + each * static_cast<long>(round + 1);
    return std::min(deadline_, std::max(round_end, now + options_.window * 10));
  }

  PreflightLine measure(const PreflightPair& pair, std::size_t round) {
    const bool dialer = pair.a == links_.rank;
    auto address = links_.wait_for(std::string(k_preflight_address_key) + std::to_string(dialer ? pair.b : pair.a),
                                   remaining());
    if (!address) {
      return PreflightLine{pair, true, -1, 0, "no answer within the budget"};
    }
    // Both ends have started: the pair has a while of its own, so that a
    // peer that stalls costs its own pairs and not the ones after them.
    const auto until = pair_until(round);
    auto fd = dialer ? dial(*address, until) : accept_from(pair.a, until);
    if (!fd) {
      return PreflightLine{pair, true, -1, 0, fd.error().message};
    }
    return dialer ? measure_as_dialer(fd->get(), pair, options_.window, until)
                  : measure_as_acceptor(fd->get(), pair, options_.window, until);
  }

  Result<net::Fd> dial(const std::string& address, Clock::time_point until) {
    auto peer = parse_peer_address(address, "preflight");
    if (!peer) {
      return fail(peer.error());
    }
    auto fd = net::dial_tcp(peer->host, peer->port, until);
    if (!fd) {
      return fail(fd.error());
    }
    Hello hello{k_magic, static_cast<std::uint32_t>(links_.rank), peer->cookie};
    auto sent = net::send_all(fd->get(), std::string_view(reinterpret_cast<const char*>(&hello), sizeof hello),
                              until);
    if (!sent) {
      return fail(ExitCode::launch, io_why(sent));
    }
    net::tune_socket(fd->get(), k_send_buffer);
    return fd;
  }

  // The connection from `peer_rank`: one that came early, or the next ones
  // until it comes (others are kept for their turn, strangers dropped).
  Result<net::Fd> accept_from(int peer_rank, Clock::time_point until) {
    if (auto early = early_.find(peer_rank); early != early_.end()) {
      net::Fd fd = std::move(early->second);
      early_.erase(early);
      return fd;
    }
    while (true) {
      net::Fd fd;
      auto accepted = net::accept_one(listener_.get(), fd, until);
      if (!accepted) {
        return fail(ExitCode::launch, io_why(accepted));
      }
      // A connection that says nothing is dropped soon: a stranger on the
      // host must not use up the pair's while.
      Hello hello;
      if (!net::recv_exact(fd.get(), reinterpret_cast<char*>(&hello), sizeof hello,
                           std::min(until, Clock::now() + k_hello_wait)) ||
          hello.magic != k_magic || hello.cookie != cookie_) {
        continue;
      }
      net::tune_socket(fd.get(), k_send_buffer);
      if (static_cast<int>(hello.rank) == peer_rank) {
        return fd;
      }
      early_[static_cast<int>(hello.rank)] = std::move(fd);
    }
  }

  Result<void> publish() {
    std::string text;
    for (const PreflightLine& line : lines_) {
      text += format_preflight_line(line) + "\n";
    }
    return links_.publish(std::string(k_preflight_figures_key) + std::to_string(links_.rank), text);
  }

  static std::string turn_key(std::size_t turn) { return std::string(k_preflight_turn_key) + std::to_string(turn); }

  Millis remaining() const {
    return std::max(Millis{1}, std::chrono::duration_cast<Millis>(deadline_ - Clock::now()));
  }

  const PreflightWorkerOptions& options_;
  const PreflightLinks& links_;
  Clock::time_point deadline_;
  Clock::time_point started_;  // every host started, or a second passed (wait_for_everyone)
  std::size_t rounds_ = 1;     // how many rounds the pairs take (preflight_rounds)
  net::Fd listener_;
  std::uint64_t cookie_ = 0;
  std::map<int, net::Fd> early_;
  std::vector<PreflightLine> lines_;
};

} // namespace

std::vector<std::size_t> preflight_rounds(const std::vector<PreflightPair>& pairs) {
  constexpr std::size_t unplaced = static_cast<std::size_t>(-1);
  std::vector<std::size_t> rounds(pairs.size(), unplaced);
  std::size_t placed = 0;
  for (std::size_t round = 0; placed < pairs.size(); ++round) {
    std::vector<int> busy;  // the hosts of this round's pairs
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const auto [a, b] = pairs[i];
      if (rounds[i] != unplaced || std::ranges::find(busy, a) != busy.end() ||
          std::ranges::find(busy, b) != busy.end()) {
        continue;
      }
      rounds[i] = round;
      ++placed;
      busy.push_back(a);
      busy.push_back(b);
    }
  }
  return rounds;
}

Result<std::vector<PreflightPair>> parse_preflight_pairs(std::string_view text) {
  std::vector<PreflightPair> pairs;
  for (const std::string& word : split(text, ',')) {
    const auto dash = word.find('-');
    auto a = dash == std::string::npos ? std::nullopt : parse_int(std::string_view(word).substr(0, dash));
    auto b = dash == std::string::npos ? std::nullopt : parse_int(std::string_view(word).substr(dash + 1));
    if (!a || !b || *a < 0 || *b < 0 || *a == *b) {
      return fail(ExitCode::usage, fmt::format("--pairs: '{}' is not RANK-RANK", word));
    }
    pairs.push_back({static_cast<int>(*a), static_cast<int>(*b)});
  }
  return pairs;
}

std::string format_preflight_pairs(const std::vector<PreflightPair>& pairs) {
  std::string text;
  for (const PreflightPair& pair : pairs) {
    text += fmt::format("{}{}-{}", text.empty() ? "" : ",", pair.a, pair.b);
  }
  return text;
}

// "A B LATENCY_MS RECEIVED_GBPS", or "A B failed WHY...".
std::string format_preflight_line(const PreflightLine& line) {
  if (line.failed) {
    return fmt::format("{} {} failed {}", line.pair.a, line.pair.b, line.why);
  }
  return fmt::format("{} {} {:.6g} {:.6g}", line.pair.a, line.pair.b, line.latency_ms, line.received_gbps);
}

std::optional<PreflightLine> parse_preflight_line(std::string_view text) {
  auto words = split(text, ' ');
  if (words.size() < 3) {
    return std::nullopt;
  }
  auto a = parse_int(words[0]);
  auto b = parse_int(words[1]);
  if (!a || !b) {
    return std::nullopt;
  }
  PreflightLine line{{static_cast<int>(*a), static_cast<int>(*b)}, false, -1, 0, {}};
  if (words[2] == "failed") {
    line.failed = true;
    const std::size_t why = text.find("failed ");
    line.why = why == std::string_view::npos ? "" : std::string(text.substr(why + 7));
    return line;
  }
  if (words.size() != 4) {
    return std::nullopt;
  }
  char* end = nullptr;
  line.latency_ms = std::strtod(words[2].c_str(), &end);
  line.received_gbps = std::strtod(words[3].c_str(), &end);
  return line;
}

Result<int> run_preflight_worker(const PreflightWorkerOptions& options, const PreflightLinks& links) {
  return Checker(options, links).run();
}

} // namespace ddl::coll
