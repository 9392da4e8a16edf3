// SPDX-License-Identifier: MIT
#include "rendezvous/client.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "rendezvous/protocol.hpp"
#include "src/util/net.hpp"
#include "src/util/text.hpp"

namespace ddl::rendezvous {
namespace {

constexpr Millis k_reply_slack{5'000};   // a GET's answer may come this late
constexpr Millis k_set_timeout{60'000};
constexpr Millis k_leave_timeout{1'000};
constexpr Millis k_hello_wait{5'000};    // per try; the server greets at once
constexpr Millis k_first_retry{20};
constexpr Millis k_last_retry{1'000};

Result<std::string> env_value(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fail(ExitCode::launch, fmt::format("{} is not set", name));
  return std::string(value);
}

Result<int> env_int(const char* name) {
  auto text = env_value(name);
  if (!text) return fail(text.error());
  auto value = parse_int(*text);
  if (!value || *value > 1'000'000'000) {
    return fail(ExitCode::launch, fmt::format("{}='{}' is not a number", name, *text));
  }
  return static_cast<int>(*value);
}

// A failed send or receive to the server, in the rendezvous' words.
Error io_error(const net::IoStatus& status) {
  switch (status.end) {
  case net::IoEnd::timed_out:
    return {ExitCode::rendezvous_timeout, "rendezvous: timed out"};
  case net::IoEnd::closed:
    return {ExitCode::launch, "rendezvous: the server closed the connection"};
  default:
    break;
  }
  if (status.call == "poll") {
    return {ExitCode::launch, fmt::format("rendezvous: poll: {}", std::strerror(status.error))};
  }
  return {ExitCode::launch,
          fmt::format("rendezvous: connection lost: {}", std::strerror(status.error))};
}

} // namespace

Result<JoinInfo> join_info_from_env() {
  JoinInfo who;
  auto endpoint = env_value("DDL_RENDEZVOUS");
  auto token = env_value("DDL_TOKEN");
  auto rank = env_int("DDL_RANK");
  auto world = env_int("DDL_WORLD_SIZE");
  auto job = env_value("DDL_JOB");
  for (const Error* error : {endpoint ? nullptr : &endpoint.error(), token ? nullptr : &token.error(),
                             rank ? nullptr : &rank.error(), world ? nullptr : &world.error(),
                             job ? nullptr : &job.error()}) {
    if (error) return fail(ExitCode::launch, "rendezvous: " + error->message);
  }
  return JoinInfo{*endpoint, *token, *rank, *world, *job};
}

Result<JoinInfo> heartbeat_info_from_env() {
  auto who = join_info_from_env();
  if (!who || std::getenv("DDL_HEARTBEAT_RANK") == nullptr) {
    return who;
  }
  auto rank = env_int("DDL_HEARTBEAT_RANK");
  auto world = env_int("DDL_HEARTBEAT_WORLD_SIZE");
  for (const Error* error : {rank ? nullptr : &rank.error(), world ? nullptr : &world.error()}) {
    if (error) return fail(ExitCode::launch, "rendezvous: " + error->message);
  }
  who->rank = *rank;
  who->world_size = *world;
  return who;
}

struct Client::State {
  Fd fd;
  int rank = 0;
  int world_size = 1;

  // One frame's payload; any failure closes the connection.
  Result<std::string> receive(Clock::time_point deadline) {
    std::array<char, 4> prefix{};
    if (auto ok = net::recv_exact(fd.get(), prefix.data(), prefix.size(), deadline); !ok) {
      return broken(io_error(ok));
    }
    std::size_t size = read_be32(prefix.data());
    if (size == 0 || size > k_max_frame) {
      return broken({ExitCode::launch, fmt::format("rendezvous: bad frame of {} bytes", size)});
    }
    std::string payload(size, '\0');
    if (auto ok = net::recv_exact(fd.get(), payload.data(), size, deadline); !ok) {
      return broken(io_error(ok));
    }
    return payload;
  }

  Result<void> send(std::string_view frame, Clock::time_point deadline) {
    if (!fd) return fail(ExitCode::launch, "rendezvous: not connected");
    if (auto ok = net::send_all(fd.get(), frame, deadline); !ok) return broken(io_error(ok));
    return {};
  }

  Unexpected broken(Error error) {
    fd.reset();
    return fail(std::move(error));
  }

  // Sends a request and reads its reply: a frame of type `want`, or an error.
  Result<std::string> call(std::string frame, MsgType want, std::string_view what,
                           Clock::time_point deadline) {
    if (auto ok = send(frame, deadline); !ok) return fail(ok.error());
    auto reply = receive(deadline);
    if (!reply) {
      Error error = reply.error();
      error.message = fmt::format("{} failed: {}", what, error.message);
      return fail(error);
    }
    FrameReader reader(*reply);
    if (reader.type() == want) return reply;
    if (reader.type() == MsgType::error) {
      auto kind = reader.u32();
      auto message = reader.bytes();
      ExitCode code = kind == static_cast<std::uint32_t>(ErrorKind::timed_out)
                          ? ExitCode::rendezvous_timeout
                          : ExitCode::launch;
      return fail(code, fmt::format("rendezvous: {}", message.value_or("malformed error")));
    }
    return broken({ExitCode::launch, fmt::format("rendezvous: {}: unexpected reply", what)});
  }
};

Client::Client(std::unique_ptr<State> state) : state_(std::move(state)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&& other) noexcept {
  if (this != &other) {
    close();
    state_ = std::move(other.state_);
  }
  return *this;
}
Client::~Client() { close(); }

int Client::rank() const { return state_->rank; }
int Client::world_size() const { return state_->world_size; }

namespace {

// One try at joining. `retry` is set when the server dropped the connection
// before answering the join (a busy or crowded server): worth another try.
Result<std::unique_ptr<Client::State>> try_join(const JoinInfo& who, const net::Endpoint& where,
                                                Clock::time_point deadline, bool& retry,
                                                MsgType kind = MsgType::join) {
  retry = false;
  auto fd = net::dial_tcp(where.host, where.port, deadline, k_net_wording);
  if (!fd) return fail(fd.error());
  auto state = std::make_unique<Client::State>();
  state->fd = std::move(*fd);
  state->rank = who.rank;
  state->world_size = who.world_size;
  auto hello = state->receive(std::min(deadline, Clock::now() + k_hello_wait));
  if (!hello) {
    retry = true;
    return fail(hello.error());
  }
  FrameReader reader(*hello);
  auto version = reader.u32();
  auto nonce = reader.raw(k_nonce_bytes);
  if (reader.type() != MsgType::hello || version != k_protocol_version || !nonce) {
    return fail(ExitCode::launch, fmt::format("rendezvous: {} is not a ddl rendezvous (version {})",
                                              who.endpoint, version.value_or(0)));
  }
  auto rank = static_cast<std::uint32_t>(who.rank);
  auto world = static_cast<std::uint32_t>(who.world_size);
  std::string join = FrameWriter(kind)
                         .u32(rank)
                         .u32(world)
                         .bytes(who.job)
                         .raw(join_mac(who.token, *nonce, rank, world, who.job))
                         .finish();
  auto joined = state->call(std::move(join), MsgType::ok, kind == MsgType::join ? "join" : "heartbeat", deadline);
  if (!joined) {
    retry = !state->fd;  // no answer, only a closed connection: not a refusal
    return fail(joined.error());
  }
  return state;
}

} // namespace

Result<void> send_heartbeat(const JoinInfo& who, Millis timeout) {
  auto endpoint = net::parse_endpoint(who.endpoint);
  if (!endpoint) return fail(endpoint.error());
  bool retry = false;
  auto sent = try_join(who, *endpoint, Clock::now() + timeout, retry, MsgType::heartbeat);
  if (!sent) return fail(sent.error());
  return {};
}

Result<Client> Client::connect(const JoinInfo& who, Millis timeout) {
  auto deadline = Clock::now() + timeout;
  auto endpoint = net::parse_endpoint(who.endpoint);
  if (!endpoint) return fail(endpoint.error());
  if (who.rank < 0 || who.world_size < 1) {
    return fail(ExitCode::launch, fmt::format("rendezvous: bad rank {} of world size {}",
                                              who.rank, who.world_size));
  }
  // Backoff with jitter, so that ranks dropped together do not return together.
  std::minstd_rand jitter(static_cast<unsigned>(who.rank) * 7919u +
                          static_cast<unsigned>(Clock::now().time_since_epoch().count()));
  Millis pause = k_first_retry;
  for (;;) {
    bool retry = false;
    auto state = try_join(who, *endpoint, deadline, retry);
    if (state) return Client(std::move(*state));
    Millis wait = pause / 2 + Millis(jitter() % static_cast<unsigned>(pause.count() / 2 + 1));
    if (!retry || Clock::now() + wait >= deadline) return fail(state.error());
    std::this_thread::sleep_for(wait);
    pause = std::min(pause * 2, k_last_retry);
  }
}

Result<void> Client::barrier(Millis timeout) {
  auto reply = state_->call(FrameWriter(MsgType::barrier).finish(), MsgType::ok, "barrier",
                            Clock::now() + timeout);
  if (!reply) return fail(reply.error());
  return {};
}

Result<void> Client::set(std::string_view key, std::string_view value) {
  auto reply = state_->call(FrameWriter(MsgType::set).bytes(key).bytes(value).finish(),
                            MsgType::ok, "set", Clock::now() + k_set_timeout);
  if (!reply) return fail(reply.error());
  return {};
}

Result<std::string> Client::get(std::string_view key, Millis timeout) {
  auto ms = static_cast<std::uint32_t>(std::clamp<long long>(timeout.count(), 0, 0x7fffffff));
  auto reply = state_->call(FrameWriter(MsgType::get).bytes(key).u32(ms).finish(), MsgType::value,
                            "get", Clock::now() + timeout + k_reply_slack);
  if (!reply) return fail(reply.error());
  FrameReader reader(*reply);
  auto value = reader.bytes();
  if (!value) return fail(ExitCode::launch, "rendezvous: malformed VALUE");
  return std::string(*value);
}

Result<std::vector<std::string>> Client::allgather(std::string_view value, Millis timeout) {
  auto reply = state_->call(FrameWriter(MsgType::allgather).bytes(value).finish(),
                            MsgType::values, "allgather", Clock::now() + timeout);
  if (!reply) return fail(reply.error());
  FrameReader reader(*reply);
  auto count = reader.u32();
  if (!count || *count != static_cast<std::uint32_t>(state_->world_size)) {
    return fail(ExitCode::launch, "rendezvous: malformed VALUES");
  }
  std::vector<std::string> values;
  values.reserve(*count);
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto part = reader.bytes();
    if (!part) return fail(ExitCode::launch, "rendezvous: malformed VALUES");
    values.emplace_back(*part);
  }
  return values;
}

void Client::close() {
  if (!state_ || !state_->fd) return;
  [[maybe_unused]] auto left = state_->call(FrameWriter(MsgType::leave).finish(), MsgType::ok,
                                            "leave", Clock::now() + k_leave_timeout);
  state_->fd.reset();
}

} // namespace ddl::rendezvous
