// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_broker.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/shim.hpp"
#include "backends/ssh/broker_wire.hpp"
#include "backends/ssh/host_session.hpp"
#include "backends/ssh/relay_session.hpp"
#include "backends/ssh/shim_probe.hpp"
#include "backends/ssh/ssh_connect.hpp"
#include "src/util/json.hpp"
#include "src/util/own_path.hpp"
#include "src/util/runtime_dir.hpp"
#include "src/util/socket_server.hpp"

namespace ddl {

namespace {

int wake_new() { return ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
void wake(int fd) {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t ignored = ::write(fd, &one, sizeof one);
}
int drain_wake(socket_t fd, int, void*) {
  std::uint64_t count = 0;
  [[maybe_unused]] ssize_t ignored = ::read(fd, &count, sizeof count);
  return 0;
}

// A trial's unix connection for one host, and the channels it opened.
struct Client;

// What the broker keeps for a trial that reads slower than its ranks write:
// past k_out_held its channels' output is held (their senders wait, as on a
// full ssh window), and passed on again below k_out_released.
constexpr std::size_t k_out_held = 1 << 20;
constexpr std::size_t k_out_released = 256 << 10;

// One channel of the host's connection, relayed to the client that opened it.
struct Relayed final : ChannelListener {
  Relayed(Client& client_, std::uint32_t id_) : client(client_), id(id_) {}
  void data(std::string_view bytes, bool is_stderr) override;
  void exit_status(int status) override;
  void exit_signal(std::string_view name) override;
  void ended() override;

  Client& client;
  std::uint32_t id;
  std::unique_ptr<HostChannel> channel;  // after the members it reports to
  bool done = false;
};

struct Client {
  explicit Client(int fd_) : fd(fd_) {}
  ~Client() {
    relays.clear();  // channels first: they write to `out`
    ::close(fd);
  }
  void queue(broker::Type type, std::uint32_t channel, std::string_view bytes = {}) {
    out += broker::encode(type, channel, bytes);
  }
  // Sends what it can without blocking: a slow trial never stalls the others.
  void flush() {
    while (!dead && !out.empty()) {
      ssize_t sent = ::send(fd, out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent < 0) {
        dead = errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
        return;
      }
      out.erase(0, static_cast<std::size_t>(sent));
    }
  }

  // Holds its channels' output while `out` is over k_out_held, until it is
  // under k_out_released.
  void hold_or_release() {
    bool hold = held ? out.size() >= k_out_released : out.size() > k_out_held;
    if (hold != held) {
      held = hold;
      for (auto& [id, relay] : relays) {
        relay->channel->hold_output(held);
      }
    }
  }

  int fd;
  broker::FrameReader reader;
  std::string out;
  bool held = false;
  bool dead = false;
  std::map<std::uint32_t, std::unique_ptr<Relayed>> relays;
};

void Relayed::data(std::string_view bytes, bool is_stderr) {
  client.queue(is_stderr ? broker::Type::err : broker::Type::out, id, bytes);
}
void Relayed::exit_status(int status) { client.queue(broker::Type::exit_status, id, std::to_string(status)); }
void Relayed::exit_signal(std::string_view name) { client.queue(broker::Type::exit_signal, id, name); }
void Relayed::ended() {
  client.queue(broker::Type::closed, id);
  done = true;
}

// One host: its connection and every trial's unix connection for it, all on
// one thread (libssh sessions are not thread-safe).
class HostBroker {
public:
  HostBroker(const SshSection& ssh, Host host) : ssh_(ssh), host_(std::move(host)), wake_fd_(wake_new()) {
    thread_ = std::thread([this] { run(); });
  }
  ~HostBroker() {
    stopping_ = true;
    wake(wake_fd_);
    thread_.join();
    ::close(wake_fd_);
  }
  HostBroker(const HostBroker&) = delete;
  HostBroker& operator=(const HostBroker&) = delete;

  // A trial's connection whose hello named this host; `rest` what it sent after.
  void adopt(int fd, broker::FrameReader rest) {
    {
      std::lock_guard lock(mutex_);
      arriving_.emplace_back(fd, std::move(rest));
    }
    wake(wake_fd_);
  }

private:
  void run();
  void welcome(int fd, broker::FrameReader rest);
  bool connected();
  void lose();
  void beat_relay();
  void drop(Client& client);
  void receive(Client& client);
  void handle(Client& client, const broker::Frame& frame);
  static int on_readable(socket_t, int, void* self);

  const SshSection& ssh_;
  Host host_;
  int wake_fd_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::deque<std::pair<int, broker::FrameReader>> arriving_;
  // Thread-owned:
  ssh_event event_ = nullptr;
  HostSessionPtr session_;
  std::unique_ptr<RelaySession> relay_;  // over session_, where the host has this ddl
  std::chrono::steady_clock::time_point next_beat_{};
  bool ever_connected_ = false;
  bool reconnected_ = false;
  std::string refusal_;  // why a trial cannot have the host now
  std::map<int, std::unique_ptr<Client>> clients_;
  std::thread thread_;
};

// The connection, made (or made again, once) when a trial asks for the host.
bool HostBroker::connected() {
  if (session_) {
    return true;
  }
  if (ever_connected_ && reconnected_) {
    return false;  // refusal_ says why
  }
  if (ever_connected_) {
    reconnected_ = true;
    spdlog::info("{}: the sweep's connection was lost; connecting again", host_.name);
  }
  auto session = ssh_connect_direct(ssh_, host_);
  if (!session) {
    refusal_ = ever_connected_ ? fmt::format("the connection is lost and could not be made again: {}",
                                             session.error().message)
                               : session.error().message;
    return false;
  }
  SshConnection probing;
  probing.session = own_session(std::move(*session));
  auto relay = start_relay_where_same_ddl(ssh_, host_, probing);
  if (!probing.session) {  // lost while asking, and not made again
    refusal_ = relay ? std::string("the connection closed") : relay.error().message;
    return false;
  }
  if (!relay) {
    spdlog::warn("{}: a login shell per trial: {}", host_.name, relay.error().message);
  } else {
    relay_ = std::move(*relay);
  }
  session_ = std::move(probing.session);
  session_->add_to(event_);
  ever_connected_ = true;
  return true;
}

// The relay hears from the broker while no trial runs there, so that it
// does not take the host for cut off.
void HostBroker::beat_relay() {
  auto now = std::chrono::steady_clock::now();
  if (relay_ && now >= next_beat_) {
    relay_->beat();
    next_beat_ = now + k_shim_heartbeat_period;
  }
}

void HostBroker::welcome(int fd, broker::FrameReader rest) {
  auto client = std::make_unique<Client>(fd);
  client->reader = std::move(rest);
  if (!connected()) {
    client->queue(broker::Type::refused, 0, refusal_);
    client->flush();
    return;
  }
  client->queue(broker::Type::ready, 0, broker::ready_bytes());
  ssh_event_add_fd(event_, fd, POLLIN, &HostBroker::on_readable, client.get());
  Client& added = *client;
  clients_[fd] = std::move(client);
  // Frames that came with the hello.
  while (auto frame = added.reader.next()) {
    handle(added, *frame);
  }
}

int HostBroker::on_readable(socket_t, int, void* self) {
  auto* client = static_cast<Client*>(self);
  char buffer[65536];
  ssize_t got = ::recv(client->fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
    client->dead = true;
  } else if (got > 0) {
    client->reader.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
  }
  return 0;
}

void HostBroker::receive(Client& client) {
  while (!client.dead) {
    auto frame = client.reader.next();
    if (!frame) {
      client.dead = client.dead || client.reader.bad();
      return;
    }
    handle(client, *frame);
  }
}

void HostBroker::handle(Client& client, const broker::Frame& frame) {
  auto found = client.relays.find(frame.channel);
  Relayed* relay = found != client.relays.end() ? found->second.get() : nullptr;
  switch (frame.type) {
  case broker::Type::open: {
    if (relay != nullptr) {
      client.queue(broker::Type::open_failed, frame.channel,
                   fmt::format("cannot open channel {}: it is open already", frame.channel));
      return;
    }
    if (!session_) {
      client.queue(broker::Type::open_failed, frame.channel, "cannot open a channel: the connection is lost");
      return;
    }
    auto opened = std::make_unique<Relayed>(client, frame.channel);
    opened->channel = relay_ ? relay_->channel(*opened) : session_->channel(*opened);
    if (auto run = opened->channel->exec(frame.bytes); !run) {
      client.queue(broker::Type::open_failed, frame.channel, run.error().message);
      return;
    }
    client.queue(broker::Type::opened, frame.channel);
    opened->channel->hold_output(client.held);
    client.relays[frame.channel] = std::move(opened);
    return;
  }
  case broker::Type::data:
    if (relay != nullptr) relay->channel->write(frame.bytes);
    return;
  case broker::Type::eof:
    if (relay != nullptr) relay->channel->send_eof();
    return;
  case broker::Type::close:
    if (relay != nullptr) client.relays.erase(found);
    return;
  default:
    client.dead = true;  // not a frame a trial sends
  }
}

// A trial gone: its channels get EOF and are closed, as its own dropped
// connection would have them (the shims end their ranks).
void HostBroker::drop(Client& client) {
  for (auto& [id, relay] : client.relays) {
    if (!relay->done && relay->channel->is_open()) {
      relay->channel->send_eof();
    }
  }
  ssh_event_remove_fd(event_, client.fd);
  clients_.erase(client.fd);
}

// The host's connection died: every trial on it is told, its channels are
// gone, and the next trial that asks makes it again (once).
void HostBroker::lose() {
  std::string why = relay_ && !session_->closed() ? relay_->error() : session_->error();
  why = why.empty() ? "host not answering" : why;
  spdlog::warn("{}: the sweep's connection was lost: {}", host_.name, why);
  refusal_ = fmt::format("the connection is lost (made again once already): {}", why);
  for (auto& [fd, client] : clients_) {
    client->relays.clear();
    client->queue(broker::Type::lost, 0, why);
    client->flush();
    ssh_event_remove_fd(event_, fd);
  }
  clients_.clear();
  relay_.reset();
  session_->remove_from(event_);
  session_.reset();
}

void HostBroker::run() {
  event_ = ssh_event_new();
  ssh_event_add_fd(event_, wake_fd_, POLLIN, &drain_wake, nullptr);
  while (!stopping_) {
    std::deque<std::pair<int, broker::FrameReader>> arriving;
    {
      std::lock_guard lock(mutex_);
      arriving.swap(arriving_);
    }
    for (auto& [fd, rest] : arriving) {
      welcome(fd, std::move(rest));
    }
    bool pending = false;
    for (auto& [fd, client] : clients_) {
      pending = pending || !client->out.empty();
    }
    ssh_event_dopoll(event_, pending ? 20 : 500);
    for (auto it = clients_.begin(); it != clients_.end();) {
      Client& client = *it->second;
      ++it;
      receive(client);
      std::erase_if(client.relays, [](const auto& entry) { return entry.second->done; });
      client.flush();
      client.hold_or_release();
      if (client.dead) {
        drop(client);
      }
    }
    if (session_ && (session_->closed() || (relay_ && relay_->closed()))) {
      lose();
    }
    beat_relay();
  }
  for (auto& [fd, client] : clients_) {
    ssh_event_remove_fd(event_, fd);
  }
  clients_.clear();
  relay_.reset();
  if (session_) {
    session_->remove_from(event_);
    session_.reset();
  }
  ssh_event_remove_fd(event_, wake_fd_);
  ssh_event_free(event_);
}

// The host a hello names, or why it is not one.
Result<Host> hello_host(const std::string& bytes) {
  Json doc = Json::parse(bytes, nullptr, false);
  if (!doc.is_object() || doc.value("version", 0) != broker::k_protocol || !doc.contains("address")) {
    return fail(ExitCode::launch, fmt::format("the session broker speaks protocol {}: not this hello",
                                              broker::k_protocol));
  }
  Host host;
  host.name = doc.value("name", std::string());
  host.address = doc.value("address", std::string());
  host.user = doc.value("user", std::string());
  if (doc.contains("port") && doc["port"].is_number_integer()) {
    host.port = doc["port"].get<int>();
  }
  return host;
}

} // namespace

// A connection accepted and not yet greeted: its hello is awaited beside
// the others' (one silent trial holds up no other) for k_hello_wait at most.
struct Arriving {
  int fd = -1;
  broker::FrameReader reader;
  std::chrono::steady_clock::time_point deadline;
};

constexpr std::chrono::seconds k_hello_wait{5};
constexpr std::size_t k_max_arriving = 256;  // the oldest is refused past that

struct SshBroker::Impl {
  SshSection ssh;
  std::string folder;
  std::string socket;
  SocketServer server;  // its listening socket, accept thread and wake-up
  std::map<std::string, std::unique_ptr<HostBroker>> hosts;  // accept thread's
  std::deque<Arriving> arriving;                             // accept thread's

  void accept_loop();
  void accept_one(int fd);
  // Reads what `waiting` sent; true when it is done with (greeted or refused).
  bool read_hello(Arriving& waiting);
  void greet(Arriving& waiting, std::optional<broker::Frame> hello);
};

static void refuse(int fd, const std::string& why) {
  std::string refused = broker::encode(broker::Type::refused, 0, why);
  [[maybe_unused]] ssize_t ignored = ::send(fd, refused.data(), refused.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::close(fd);
}

// Hands a connection whose hello named a host to that host's thread.
void SshBroker::Impl::greet(Arriving& waiting, std::optional<broker::Frame> hello) {
  auto host = hello && hello->type == broker::Type::hello ? hello_host(hello->bytes)
                                                          : Result<Host>(fail(ExitCode::launch, "no hello"));
  if (!host) {
    refuse(waiting.fd, host.error().message);
    return;
  }
  std::string key = fmt::format("{}@{}:{}", host->user, host->address, host->port.value_or(0));
  auto& broker = hosts[key];
  if (!broker) {
    broker = std::make_unique<HostBroker>(ssh, std::move(*host));
  }
  broker->adopt(waiting.fd, std::move(waiting.reader));
}

bool SshBroker::Impl::read_hello(Arriving& waiting) {
  char buffer[4096];
  ssize_t got = ::recv(waiting.fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
    return false;
  }
  if (got <= 0) {
    ::close(waiting.fd);
    return true;
  }
  waiting.reader.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
  auto hello = waiting.reader.next();
  if (!hello && !waiting.reader.bad()) {
    return false;
  }
  greet(waiting, std::move(hello));
  return true;
}

void SshBroker::Impl::accept_one(int fd) {
  if (peer_uid(fd) != ::geteuid()) {
    ::close(fd);
    return;
  }
  if (arriving.size() >= k_max_arriving) {
    refuse(arriving.front().fd, "no hello: too many connections wait for theirs");
    arriving.pop_front();
  }
  arriving.push_back(Arriving{fd, {}, std::chrono::steady_clock::now() + k_hello_wait});
}

void SshBroker::Impl::accept_loop() {
  std::vector<pollfd> fds;
  while (!server.stopping()) {
    fds.assign({{server.listener(), POLLIN, 0}, {server.wake_fd(), POLLIN, 0}});
    for (const Arriving& waiting : arriving) {
      fds.push_back({waiting.fd, POLLIN, 0});
    }
    int ready = ::poll(fds.data(), fds.size(), arriving.empty() ? 1000 : 100);
    if (server.stopping()) {
      break;
    }
    auto now = std::chrono::steady_clock::now();
    std::deque<Arriving> still;
    for (std::size_t i = 0; i < arriving.size(); ++i) {
      Arriving& waiting = arriving[i];
      bool readable = ready > 0 && fds[i + 2].revents != 0;
      if (readable && read_hello(waiting)) {
        continue;
      }
      if (now >= waiting.deadline) {
        refuse(waiting.fd, "no hello");
        continue;
      }
      still.push_back(std::move(waiting));
    }
    arriving.swap(still);
    // All that wait (the listen backlog is short), a bounded number per round.
    server.accept_waiting([] { return true; }, [this](int fd, const sockaddr_storage&) { accept_one(fd); }, 64);
  }
  for (Arriving& waiting : arriving) {
    ::close(waiting.fd);
  }
  arriving.clear();
  hosts.clear();
}

Result<std::unique_ptr<SshBroker>> SshBroker::start(const SshSection& ssh, const std::string& dir) {
  auto impl = std::make_unique<Impl>();
  impl->ssh = ssh;
  impl->folder = dir + "/.ssh-broker";
  auto own = own_folder(impl->folder, "sweep folder", true);
  if (!own) {
    return fail(own.error());
  }
  if (::chmod(own->c_str(), 0700) != 0) {
    return fail(ExitCode::launch, fmt::format("cannot make {}: {}", impl->folder, std::strerror(errno)));
  }
  impl->socket = impl->folder + "/socket";
  if (impl->socket.size() >= 100) {
    auto runtime = runtime_dir(true);
    if (!runtime) {
      return fail(runtime.error());
    }
    impl->socket = fmt::format("{}/sweep-{}-ssh.sock", *runtime, ::getpid());
  }
  auto listening = listen_unix(impl->socket);
  if (!listening) {
    return fail(listening.error());
  }
  if (auto opened = impl->server.open(net::Fd(*listening), "the sweep's session broker"); !opened) {
    ::unlink(impl->socket.c_str());
    return fail(opened.error());
  }
  Impl* running = impl.get();
  impl->server.run([running] { running->accept_loop(); });
  return std::unique_ptr<SshBroker>(new SshBroker(std::move(impl)));
}

SshBroker::SshBroker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SshBroker::~SshBroker() {
  impl_->server.stop();
  ::unlink(impl_->socket.c_str());
  std::error_code ec;
  std::filesystem::remove(impl_->folder, ec);
}

const std::string& SshBroker::socket() const { return impl_->socket; }

} // namespace ddl
