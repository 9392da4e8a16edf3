// SPDX-License-Identifier: MIT
#include "src/launch/live_server.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/core.h>

#include "src/launch/live_protocol.hpp"
#include "src/launch/output.hpp"
#include "src/util/json.hpp"
#include "src/util/runtime_dir.hpp"
#include "src/util/signal_names.hpp"
#include "src/util/signals.hpp"
#include "src/util/socket_server.hpp"
#include "src/util/text.hpp"

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t k_ring_total_bytes = std::size_t{16} << 20;  // every rank's ring together
constexpr std::size_t k_ring_min_bytes = std::size_t{8} << 10;
constexpr std::size_t k_ring_max_bytes = std::size_t{256} << 10;
constexpr std::size_t k_ring_max_lines = 2000;
constexpr std::size_t k_client_out_cap = std::size_t{1} << 20;  // a follower past this falls behind
constexpr std::size_t k_request_max_bytes = 256;
constexpr auto k_request_time = std::chrono::seconds(5);
constexpr int k_follow_poll_ms = 50;

struct RingLine {
  std::uint64_t seq = 0;
  int rank = 0;
  Stream stream = Stream::out;
  LineEnd end = LineEnd::newline;
  std::string text;
};

// One rank's recent lines; `evicted` counts those pushed out, `last_evicted`
// is the newest of them (a follower behind it missed some).
struct RankRing {
  std::deque<RingLine> lines;
  std::size_t bytes = 0;
  std::uint64_t evicted = 0;
  std::optional<std::uint64_t> last_evicted;
};

enum class ClientKind { request, once, follow, waiter };

struct Client {
  int fd = -1;
  std::string in;
  std::string out;
  ClientKind kind = ClientKind::request;
  int rank = -1;                 // follow: -1 for every rank
  std::uint64_t next_seq = 0;    // follow, once: the first line not yet sent
  std::uint64_t until = 0;       // once: the lines before this one (those kept at the request)
  Clock::time_point accepted = Clock::now();
  bool closing = false;          // close once `out` is written
};

std::string encode_line(const RingLine& line) {
  char end = line.end == LineEnd::partial ? 'p' : line.end == LineEnd::carriage ? 'c' : 'n';
  return fmt::format("L {} {} {} {}\n", line.rank, line.stream == Stream::out ? 'o' : 'e', end, line.text);
}

} // namespace

struct LiveServer::State {
  LiveJobInfo info;
  std::string path;
  SocketServer server;  // its listening socket, thread and wake-up
  pid_t pid = ::getpid();
  std::string started = event_time_now();
  Clock::time_point started_at = Clock::now();
  RankSignalQueue signals;
  std::size_t ring_cap = k_ring_max_bytes;

  std::mutex mutex;  // guards what follows
  std::vector<RankRing> rings;
  std::uint64_t seq = 0;
  std::string state = "starting";
  int attempt = 0;
  std::optional<int> exit_code;

  void serve();
  void accept_clients(std::vector<Client>& clients) const;
  void handle_request(Client& client, std::size_t followers);
  std::string info_json();
  void answer_logs(Client& client, std::string_view rank_text, std::string_view follow_text);
  void answer_signal(Client& client, int signo);
  void pump(Client& client);
  void wake() const { server.wake(); }
};

int parse_signal(std::string_view text) {
  std::string name;
  for (char c : text) {
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (auto number = parse_int(name)) {
    return *number >= 1 && *number <= SIGRTMAX ? static_cast<int>(*number) : 0;
  }
  return signal_number(name).value_or(0);
}

Result<std::unique_ptr<LiveServer>> LiveServer::start(LiveJobInfo info) {
  auto dir = runtime_dir(true);
  if (!dir) {
    return fail(dir.error());
  }
  auto state = std::make_shared<State>();
  state->path = fmt::format("{}/{}.sock", *dir, state->pid);
  auto fd = listen_unix(state->path);
  if (!fd) {
    return fail(fd.error());
  }
  if (auto opened = state->server.open(net::Fd(*fd), "ddl's control socket"); !opened) {
    ::unlink(state->path.c_str());
    return fail(opened.error());
  }
  const auto ranks = static_cast<std::size_t>(std::max(info.ranks, 1));
  state->ring_cap = std::clamp(k_ring_total_bytes / ranks, k_ring_min_bytes, k_ring_max_bytes);
  state->rings.resize(ranks);
  state->info = std::move(info);
  state->server.run([state] { state->serve(); });
  return std::unique_ptr<LiveServer>(new LiveServer(state));
}

LiveServer::LiveServer(std::shared_ptr<State> state) : state_(std::move(state)) {}

LiveServer::~LiveServer() {
  state_->server.stop();
  ::unlink(state_->path.c_str());
}

const std::string& LiveServer::path() const { return state_->path; }

RankSignalQueue& LiveServer::rank_signals() { return state_->signals; }

void LiveServer::line(int rank, Stream stream, std::string_view text, LineEnd end) {
  std::lock_guard lock(state_->mutex);
  auto index = static_cast<std::size_t>(rank);
  if (index >= state_->rings.size()) {
    return;
  }
  RankRing& ring = state_->rings[index];
  ring.lines.push_back({state_->seq++, rank, stream, end, std::string(text)});
  ring.bytes += text.size();
  while (ring.lines.size() > 1 && (ring.bytes > state_->ring_cap || ring.lines.size() > k_ring_max_lines)) {
    ring.bytes -= ring.lines.front().text.size();
    ring.last_evicted = ring.lines.front().seq;
    ++ring.evicted;
    ring.lines.pop_front();
  }
}

void LiveServer::set_state(std::string_view state, int attempt) {
  std::lock_guard lock(state_->mutex);
  state_->state = std::string(state);
  state_->attempt = attempt;
}

void LiveServer::finished(int exit_code) {
  {
    std::lock_guard lock(state_->mutex);
    state_->state = "ended";
    state_->exit_code = exit_code;
  }
  state_->wake();
}

std::string LiveServer::State::info_json() {
  std::lock_guard lock(mutex);
  Json doc{{"id", std::to_string(pid)},
           {"pid", pid},
           {"name", valid_utf8(info.name)},
           {"ranks", info.ranks},
           {"hosts", info.hosts},
           {"backend", info.backend},
           {"state", state},
           {"attempt", attempt},
           {"started", started},
           {"age_s", std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_at).count()},
           {"log_dir", info.log_dir}};
  if (exit_code) {
    doc["exit_code"] = *exit_code;
  }
  return to_json_text(doc) + "\n";
}

void LiveServer::State::answer_logs(Client& client, std::string_view rank_text, std::string_view follow_text) {
  auto rank = rank_text == "-1" ? std::optional<long long>(-1) : parse_int(rank_text);
  if (!rank || *rank >= info.ranks) {
    client.out = fmt::format("X rank {} is not in this job of {} ranks\n", rank_text, info.ranks);
    client.closing = true;
    return;
  }
  client.rank = static_cast<int>(*rank);
  client.kind = follow_text == "1" ? ClientKind::follow : ClientKind::once;
  std::uint64_t evicted = 0;
  {
    std::lock_guard lock(mutex);
    client.until = seq;
    for (std::size_t r = 0; r < rings.size(); ++r) {
      if (client.rank < 0 || static_cast<int>(r) == client.rank) {
        evicted += rings[r].evicted;
      }
    }
  }
  if (evicted > 0) {
    client.out = info.log_dir.empty()
                     ? fmt::format("N {} earlier lines are not kept here (run with --log-dir to keep them all)\n",
                                   evicted)
                     : fmt::format("N {} earlier lines are not kept here; {} has them all\n", evicted, info.log_dir);
  }
  pump(client);
}

// Adds the lines `client` has not had yet (up to its buffer's cap; the rest
// on a later call), and "E CODE" once the job has ended and every line went
// out. A `once` client is done with the lines kept at its request.
void LiveServer::State::pump(Client& client) {
  if (client.kind == ClientKind::request || client.closing) {
    return;
  }
  std::lock_guard lock(mutex);
  if (client.kind != ClientKind::waiter) {
    std::vector<const RingLine*> fresh;
    for (std::size_t r = 0; r < rings.size(); ++r) {
      if (client.rank >= 0 && static_cast<int>(r) != client.rank) {
        continue;
      }
      const RankRing& ring = rings[r];
      if (client.next_seq > 0 && ring.last_evicted && *ring.last_evicted >= client.next_seq) {
        client.out += fmt::format("N some lines of rank {} were skipped: this reader fell behind\n", r);
      }
      auto first = std::ranges::lower_bound(ring.lines, client.next_seq, {}, &RingLine::seq);
      for (auto it = first; it != ring.lines.end(); ++it) {
        fresh.push_back(&*it);
      }
    }
    std::ranges::sort(fresh, {}, &RingLine::seq);
    const std::uint64_t limit = client.kind == ClientKind::once ? client.until : seq;
    std::uint64_t next = limit;
    for (const RingLine* line : fresh) {
      if (line->seq >= limit) {
        break;
      }
      if (client.out.size() >= k_client_out_cap) {
        next = line->seq;
        break;
      }
      client.out += encode_line(*line);
    }
    client.next_seq = next;
    if (next != limit) {
      return;  // more to send first
    }
    if (client.kind == ClientKind::once) {
      client.closing = true;
      return;
    }
  }
  if (exit_code && client.kind != ClientKind::once && !client.closing) {
    client.out += fmt::format("E {}\n", *exit_code);
    client.closing = true;
  }
}

void LiveServer::State::answer_signal(Client& client, int signo) {
  client.closing = true;
  if (signo <= 0) {
    client.out = "X not a signal\n";
    return;
  }
  if (signo == SIGINT || signo == SIGTERM || signo == SIGHUP) {
    // The path of the same signal to ddl: the job stops as it would.
    ::kill(pid, signo);
    client.out = fmt::format("O {} sent to ddl (the job stops as it would on it)\n", signal_name(signo));
    return;
  }
  std::string now;
  {
    std::lock_guard lock(mutex);
    now = state;
  }
  if (now != "running") {
    client.out = fmt::format("X no rank is running (the job is {})\n", now);
    return;
  }
  signals.push(signo);
  client.out = fmt::format("O {} forwarded to every running rank\n", signal_name(signo));
}

void LiveServer::State::handle_request(Client& client, std::size_t followers) {
  std::size_t newline = client.in.find('\n');
  auto request = live_protocol::read_request(trim(std::string_view(client.in).substr(0, newline)));
  client.in.clear();
  if (!request) {
    client.out = fmt::format("X {}\n", request.error().message);
    client.closing = true;
    return;
  }
  std::vector<std::string> words = split(*request, ' ');
  const std::string verb = words.empty() ? "" : words[0];
  if (verb == "info" && words.size() == 1) {
    client.out = info_json();
    client.closing = true;
  } else if (verb == "logs" && words.size() == 3 && words[2] == "1" &&
             followers >= static_cast<std::size_t>(k_max_followers)) {
    client.out = fmt::format("X this job has {} followers (ddl logs -f) already; try again once one ends\n",
                             k_max_followers);
    client.closing = true;
  } else if (verb == "logs" && words.size() == 3) {
    answer_logs(client, words[1], words[2]);
  } else if (verb == "stop" && words.size() == 1) {
    ::kill(pid, SIGINT);  // exactly a Ctrl-C to ddl
    client.out = "O SIGINT sent to ddl (as Ctrl-C)\n";
    client.kind = ClientKind::waiter;
    pump(client);
  } else if (verb == "signal" && words.size() == 2) {
    auto number = parse_int(words[1]);
    answer_signal(client, number && *number < NSIG ? static_cast<int>(*number) : 0);
  } else {
    client.out = "X unknown request\n";
    client.closing = true;
  }
}

namespace {

// Clients that follow a rank's lines: they stay as long as the job.
std::size_t count_followers(const std::vector<Client>& clients) {
  return static_cast<std::size_t>(
      std::ranges::count_if(clients, [](const Client& c) { return c.kind == ClientKind::follow; }));
}

} // namespace

void LiveServer::State::accept_clients(std::vector<Client>& clients) const {
  auto room = [&clients] {
    return clients.size() - count_followers(clients) < static_cast<std::size_t>(k_max_requests);
  };
  server.accept_waiting(room, [&clients](int fd, const sockaddr_storage&) {
    auto uid = peer_uid(fd);
    if (!uid || *uid != ::geteuid()) {
      static constexpr std::string_view refused = "X refused: this job belongs to another user\n";
      [[maybe_unused]] ssize_t ignored = ::send(fd, refused.data(), refused.size(), MSG_NOSIGNAL);
      ::close(fd);
      return;
    }
    Client client;
    client.fd = fd;
    clients.push_back(std::move(client));
  });
}

namespace {

// Reads what `client` sent; false when it hung up or sent too much.
bool read_request(Client& client) {
  char buffer[512];
  while (true) {
    ssize_t got = ::recv(client.fd, buffer, sizeof buffer, 0);
    if (got > 0) {
      if (client.kind != ClientKind::request) {
        continue;  // nothing more is asked once a request is answered
      }
      client.in.append(buffer, static_cast<std::size_t>(got));
      if (client.in.size() > k_request_max_bytes) {
        return false;
      }
      continue;
    }
    if (got == 0) {
      return false;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }
}

// Writes what it can; false when the client went away.
bool write_some(Client& client) {
  while (!client.out.empty()) {
    ssize_t sent = ::send(client.fd, client.out.data(), client.out.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
    client.out.erase(0, static_cast<std::size_t>(sent));
  }
  return true;
}

} // namespace

void LiveServer::State::serve() {
  std::vector<Client> clients;
  std::optional<Clock::time_point> quit_deadline;
  while (true) {
    if (server.stopping() && !quit_deadline) {
      quit_deadline = Clock::now() + std::chrono::milliseconds(500);  // the last lines, "E CODE"
    }
    for (Client& client : clients) {
      pump(client);
    }
    bool pending = std::ranges::any_of(clients, [](const Client& c) { return !c.out.empty(); });
    if (quit_deadline && (!pending || Clock::now() >= *quit_deadline)) {
      break;
    }
    std::size_t followers = count_followers(clients);
    const bool room = clients.size() - followers < static_cast<std::size_t>(k_max_requests) && !quit_deadline;
    std::vector<pollfd> fds{{server.wake_fd(), POLLIN, 0}, {room ? server.listener() : -1, POLLIN, 0}};
    for (const Client& client : clients) {
      fds.push_back({client.fd, static_cast<short>(POLLIN | (client.out.empty() ? 0 : POLLOUT)), 0});
    }
    bool following = std::ranges::any_of(clients, [](const Client& c) { return c.kind == ClientKind::follow; });
    ::poll(fds.data(), fds.size(), following || quit_deadline ? k_follow_poll_ms : 1000);
    if ((fds[0].revents & POLLIN) != 0) {
      server.drain_wake();
    }
    for (std::size_t i = 0; i < clients.size(); ++i) {
      Client& client = clients[i];
      const short events = fds[i + 2].revents;
      bool alive = (events & (POLLIN | POLLHUP | POLLERR)) == 0 || read_request(client);
      if (alive && client.kind == ClientKind::request && client.in.find('\n') != std::string::npos) {
        handle_request(client, followers);
        followers += client.kind == ClientKind::follow ? 1 : 0;
      }
      alive = alive && write_some(client);
      bool done = client.closing && client.out.empty();
      bool stalled = client.kind == ClientKind::request && Clock::now() - client.accepted > k_request_time;
      if (!alive || done || stalled) {
        ::close(client.fd);
        client.fd = -1;
      }
    }
    std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
    if ((fds[1].revents & POLLIN) != 0) {
      accept_clients(clients);
    }
  }
  for (const Client& client : clients) {
    ::close(client.fd);
  }
}

} // namespace ddl
