// SPDX-License-Identifier: MIT
#include "backends/ssh/host_link.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

namespace ddl {

struct HostLink::RankChannel final : ShimChannel::Sink {
  RankChannel(int rank_, RankEvents& events_, std::unique_ptr<ShimChannel> channel_)
      : rank(rank_), events(events_), channel(std::move(channel_)) {
    channel->attach(*this);
  }
  void started(long pid) override { events.started(rank, pid); }
  void output(Stream stream, std::string_view bytes) override { events.output(rank, stream, bytes); }
  void exited(const RankExit& how) override { events.exited(rank, how); }

  int rank;
  RankEvents& events;
  std::unique_ptr<ShimChannel> channel;
};

namespace {

int drain_wake(socket_t fd, int, void*) {
  std::uint64_t count = 0;
  [[maybe_unused]] ssize_t ignored = ::read(fd, &count, sizeof count);
  return 0;
}

} // namespace

HostLink::HostLink(std::string host_name, HostSessionPtr session, std::unique_ptr<RelaySession> relay,
                   ReadyChannels ready, Reconnect reconnect)
    : host_name_(std::move(host_name)), session_(std::move(session)), relay_(std::move(relay)),
      ready_(std::move(ready)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), reconnect_(std::move(reconnect)) {
  thread_ = std::thread([this] { run(); });
}

HostLink::~HostLink() {
  close();
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);
  }
}

void HostLink::post(Task task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t ignored = ::write(wake_fd_, &one, sizeof one);
}

void HostLink::start(int rank, std::string payload, RankEvents& events) {
  post([this, rank, payload = std::move(payload), &events] {
    // A channel opened and checked by prepare() needs only the payload.
    auto ready = ready_.find(rank);
    if (ready != ready_.end()) {
      auto channel = std::move(ready->second);
      ready_.erase(ready);
      if (!lost_ && !channel->closed()) {
        auto entry = std::make_unique<RankChannel>(rank, events, std::move(channel));
        if (auto sent = entry->channel->send_payload(payload); !sent) {
          entry->channel->finish(fmt::format("{}: {}", host_name_, sent.error().message));
          return;
        }
        channels_[rank] = std::move(entry);
        return;
      }
    }
    reconnect_once();
    auto entry = std::make_unique<RankChannel>(rank, events, std::make_unique<ShimChannel>(rank_session()));
    if (lost_) {
      entry->channel->finish(fmt::format("{}: the connection is lost", host_name_));
      return;
    }
    if (auto started = entry->channel->start(payload); !started) {
      entry->channel->finish(fmt::format("{}: {}", host_name_, started.error().message));
      return;
    }
    channels_[rank] = std::move(entry);
  });
}

void HostLink::send(int rank, std::string line) {
  post([this, rank, line = std::move(line)] {
    auto found = channels_.find(rank);
    if (found != channels_.end()) {
      found->second->channel->send(line);
    }
  });
}

void HostLink::close() {
  if (!thread_.joinable()) {
    return;
  }
  post([this] {
    for (auto& [rank, entry] : channels_) {
      entry->channel->send(*shim_signal_line(9));
      entry->channel->send_eof();
    }
    closing_ = true;
  });
  thread_.join();
}

HostLink::Kept HostLink::release() {
  if (!thread_.joinable()) {
    return {};
  }
  keep_session_ = true;
  close();
  if (lost_) {
    return {};
  }
  return {std::move(session_), std::move(relay_)};
}

void HostLink::drain_tasks() {
  std::deque<Task> tasks;
  {
    std::lock_guard lock(mutex_);
    tasks.swap(tasks_);
  }
  for (auto& task : tasks) {
    task();
  }
}

void HostLink::reap_closed() {
  for (auto it = channels_.begin(); it != channels_.end();) {
    if (it->second->channel->closed()) {
      it->second->channel->finish();
      it = channels_.erase(it);
    } else {
      ++it;
    }
  }
}

HostSession& HostLink::rank_session() {
  if (relay_ && !relay_->closed()) {
    return *relay_;
  }
  return *session_;
}

void HostLink::lose_connection() {
  lost_ = true;
  std::string why = relay_ && !session_->closed() ? relay_->error() : session_->error();
  for (auto& [rank, entry] : channels_) {
    entry->channel->finish(fmt::format("lost the connection to {}: {}", host_name_,
                                      why.empty() ? "host not answering" : why));
  }
  channels_.clear();
}

// A restart's rank on a lost connection: one new connection, in place of
// the old one, for this and the following ranks.
void HostLink::reconnect_once() {
  if (!lost_ || reconnected_ || !reconnect_) {
    return;
  }
  reconnected_ = true;
  spdlog::info("{}: the connection was lost; connecting again", host_name_);
  auto session = reconnect_();
  if (!session) {
    spdlog::warn("{}: cannot connect again: {}", host_name_, session.error().message);
    return;
  }
  ready_.clear();  // channels of the old session
  relay_.reset();
  session_->remove_from(event_);
  session_ = std::move(*session);
  session_->add_to(event_);
  lost_ = false;
}

// Every started rank's shim gets a beat line each period; a shim that hears
// none for k_shim_heartbeat_misses periods (this host cut off) ends its rank.
// The relay gets one too: without ranks (a restart's backoff) it would end
// after k_relay_idle of silence, and the restart would need a new connection.
void HostLink::send_heartbeats() {
  auto now = std::chrono::steady_clock::now();
  if (now < next_beat_) {
    return;
  }
  next_beat_ = now + k_shim_heartbeat_period;
  if (relay_ && !relay_->closed()) {
    relay_->beat();
  }
  for (auto& [rank, entry] : channels_) {
    entry->channel->send(k_shim_beat_line);
  }
}

void HostLink::run() {
  event_ = ssh_event_new();
  ssh_event event = event_;
  session_->add_to(event);
  ssh_event_add_fd(event, wake_fd_, POLLIN, &drain_wake, nullptr);
  while (true) {
    drain_tasks();
    reap_closed();
    if (closing_) {
      break;
    }
    if (lost_) {
      pollfd wake{wake_fd_, POLLIN, 0};
      ::poll(&wake, 1, 1000);
      drain_wake(wake_fd_, 0, nullptr);
      continue;
    }
    ssh_event_dopoll(event, channels_.empty() ? 1000 : 200);
    send_heartbeats();
    if (connection_lost()) {
      reap_closed();
      lose_connection();
    }
  }
  // Gives the KILL lines a moment to leave before the connection closes;
  // remote shims also end their groups on EOF when it drops.
  if (!lost_ && !channels_.empty()) {
    ssh_event_dopoll(event, 50);
  }
  channels_.clear();  // the supervisor gave up on them: no more events
  ready_.clear();     // unused: EOF ends their shims quietly
  if (!keep_session_ || lost_) {
    relay_.reset();  // EOF: the relay ends what is left (else release() keeps it; one that ended is dropped then)
  }
  ssh_event_remove_fd(event, wake_fd_);
  session_->remove_from(event);
  ssh_event_free(event);
  event_ = nullptr;
  if (!keep_session_ || lost_) {
    session_.reset();
  }
}

} // namespace ddl
