// SPDX-License-Identifier: MIT
#include "backends/ssh/ssh_connect.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <netinet/in.h>
#include <poll.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "backends/ssh/broker_client.hpp"
#include "src/util/signals.hpp"

namespace ddl {

namespace {

using Clock = std::chrono::steady_clock;

std::string last_error(ssh_session session) {
  std::string text = ssh_get_error(session);
  return text.empty() ? "unknown error" : text;
}

bool file_exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// The ssh options of the job file win over the OpenSSH config: they are set
// before it is read, and libssh keeps the first value it gets.
Result<void> set_options(ssh_session session, const SshSection& options, const Host& host) {
  auto set = [&](ssh_options_e what, const void* value, const char* name) -> Result<void> {
    if (ssh_options_set(session, what, value) != SSH_OK) {
      return fail(ExitCode::launch, fmt::format("invalid ssh option {}: {}", name, last_error(session)));
    }
    return {};
  };
  int no = 0;
  if (auto r = set(SSH_OPTIONS_PROCESS_CONFIG, &no, "config"); !r) return r;
  // The name as written: the config's Host blocks match it (an alias keeps
  // its User, Port, ProxyJump), and its HostName is what address holds.
  if (auto r = set(SSH_OPTIONS_HOST, host.name.c_str(), "host"); !r) return r;
  // A login in the host list ("ml@gpu-a:2222:8") wins over [ssh] user and port.
  const std::string& user = host.user.empty() ? options.user : host.user;
  if (!user.empty()) {
    if (auto r = set(SSH_OPTIONS_USER, user.c_str(), "user"); !r) return r;
  }
  if (auto chosen = host.port ? host.port : options.port) {
    unsigned int port = static_cast<unsigned int>(*chosen);
    if (auto r = set(SSH_OPTIONS_PORT, &port, "port"); !r) return r;
  }
  long seconds = static_cast<long>(options.connect_timeout.count() / 1000);
  long micros = static_cast<long>(options.connect_timeout.count() % 1000) * 1000;
  if (auto r = set(SSH_OPTIONS_TIMEOUT, &seconds, "connect_timeout"); !r) return r;
  if (auto r = set(SSH_OPTIONS_TIMEOUT_USEC, &micros, "connect_timeout"); !r) return r;
  if (options.known_hosts != "~/.ssh/known_hosts") {
    std::string path = expand_home(options.known_hosts);
    if (auto r = set(SSH_OPTIONS_KNOWNHOSTS, path.c_str(), "known_hosts"); !r) return r;
  }
  if (!options.identity.empty()) {
    std::string path = expand_home(options.identity);
    if (auto r = set(SSH_OPTIONS_IDENTITY, path.c_str(), "identity"); !r) return r;
  }
  if (options.config != "none") {
    for (const std::string& path : {expand_home(options.config), std::string("/etc/ssh/ssh_config")}) {
      if (file_exists(path) && ssh_options_parse_config(session, path.c_str()) != SSH_OK) {
        return fail(ExitCode::launch, fmt::format("cannot read ssh config {}: {}", path, last_error(session)));
      }
    }
  }
  return {};
}

} // namespace

std::string ssh_config_hostname(const SshSection& options, const std::string& name) {
  SshSessionPtr session(ssh_new());
  Host host;
  host.name = host.address = name;
  char* resolved = nullptr;
  if (!session || !set_options(session.get(), options, host) ||
      ssh_options_get(session.get(), SSH_OPTIONS_HOST, &resolved) != SSH_OK || resolved == nullptr) {
    return name;
  }
  std::string hostname(resolved);
  ssh_string_free_char(resolved);
  return hostname.empty() ? name : hostname;
}

namespace {

// Keepalive probes after 1s idle, and any data unacknowledged for
// connect_timeout ends the connection: a host that dies mid-run is noticed.
void set_keepalive(ssh_session session, Millis connect_timeout) {
  int fd = ssh_get_fd(session);
  if (fd < 0) {
    return;
  }
  int on = 1;
  int idle = 1;
  int interval = 1;
  int count = std::max(2, static_cast<int>(connect_timeout.count() / 1000));
  unsigned int user_timeout = static_cast<unsigned int>(std::max<long long>(1000, connect_timeout.count()));
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

Result<void> verify_host_key(ssh_session session, const SshSection& options) {
  std::string fingerprint = host_key_fingerprint(session);
  std::string known = options.known_hosts;
  switch (ssh_session_is_known_server(session)) {
    case SSH_KNOWN_HOSTS_OK:
      return {};
    case SSH_KNOWN_HOSTS_CHANGED:
      return fail(ExitCode::launch,
                  fmt::format("host key has CHANGED, offered key {} does not match {} "
                              "(possible man-in-the-middle attack; if the host was reinstalled, "
                              "remove its old key with ssh-keygen -R)",
                              fingerprint, known));
    case SSH_KNOWN_HOSTS_OTHER:
      return fail(ExitCode::launch,
                  fmt::format("host key has CHANGED: offered key {} is of another type than the "
                              "one in {} (possible man-in-the-middle attack)",
                              fingerprint, known));
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      break;
    case SSH_KNOWN_HOSTS_ERROR:
      return fail(ExitCode::launch, fmt::format("cannot check the host key: {}", last_error(session)));
  }
  switch (options.host_key_check) {
    case HostKeyCheck::yes:
      return fail(ExitCode::launch,
                  fmt::format("host key {} is unknown (not in {}); add it to known_hosts, or set "
                              "[ssh] host_key_check = \"accept-new\"",
                              fingerprint, known));
    case HostKeyCheck::accept_new:
      if (ssh_session_update_known_hosts(session) != SSH_OK) {
        return fail(ExitCode::launch, fmt::format("cannot record host key {} in {}: {}", fingerprint,
                                                  known, last_error(session)));
      }
      spdlog::warn("recorded new host key {} in {}", fingerprint, known);
      return {};
    case HostKeyCheck::no:
      spdlog::warn("host key {} NOT verified (host_key_check = \"no\")", fingerprint);
      return {};
  }
  return {};
}

// How a non-blocking libssh step ended.
enum class Step { done, stopped, timed_out };

// Calls `step` (a non-blocking libssh call) until it answers other than
// `again`, waiting for the session's socket between calls, the stop token
// (Ctrl-C, SIGTERM, the job's deadline) and `deadline` in view. `rc` holds
// its last answer.
template <typename Call>
Step step_until_done(ssh_session session, const Call& step, int again, Clock::time_point deadline, int& rc) {
  constexpr int k_tick_ms = 20;  // libssh may hold data already read
  while ((rc = step()) == again) {
    if (stop::requested()) {
      return Step::stopped;
    }
    if (Clock::now() >= deadline) {
      return Step::timed_out;
    }
    std::array<pollfd, 2> fds{{{ssh_get_fd(session), POLLIN, 0}, {stop::fd(), POLLIN, 0}}};
    ::poll(fds.data(), fds.size(), stop::wait_ms(k_tick_ms));
  }
  return Step::done;
}

// ssh_userauth_* in non-blocking mode, bounded by connect_timeout and the
// stop token; SSH_AUTH_ERROR when either ends it (ended() says which).
class AuthSteps {
public:
  AuthSteps(ssh_session session, Millis timeout) : session_(session), timeout_(timeout) {}
  template <typename Call> int run(const Call& call) {
    if (ended_ != Step::done) {
      return SSH_AUTH_ERROR;
    }
    int rc = SSH_AUTH_ERROR;
    Step how = step_until_done(session_, call, SSH_AUTH_AGAIN, Clock::now() + timeout_, rc);
    if (how != Step::done) {
      ended_ = how;
      return SSH_AUTH_ERROR;
    }
    return rc;
  }
  // Step::done unless the stop token or the timeout ended a step.
  Step ended() const { return ended_; }

private:
  ssh_session session_;
  Millis timeout_;
  Step ended_ = Step::done;
};

Result<void> authenticate_with(ssh_session session, const SshSection& options, AuthSteps& steps) {
  if (steps.run([&] { return ssh_userauth_none(session, nullptr); }) == SSH_AUTH_SUCCESS) {
    return {};
  }
  std::string tried;
  if (!options.identity.empty()) {
    std::string path = expand_home(options.identity);
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(path.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
      return fail(ExitCode::launch, fmt::format("cannot read identity {}", path));
    }
    int rc = steps.run([&] { return ssh_userauth_publickey(session, nullptr, key); });
    ssh_key_free(key);
    if (rc == SSH_AUTH_SUCCESS) {
      return {};
    }
    tried = "identity " + path;
  } else {
    if (std::getenv("SSH_AUTH_SOCK") != nullptr) {
      if (steps.run([&] { return ssh_userauth_agent(session, nullptr); }) == SSH_AUTH_SUCCESS) {
        return {};
      }
      tried = "agent, ";
    }
    if (steps.run([&] { return ssh_userauth_publickey_auto(session, nullptr, nullptr); }) ==
        SSH_AUTH_SUCCESS) {
      return {};
    }
    tried += "default keys";
  }
  char* user = nullptr;
  ssh_options_get(session, SSH_OPTIONS_USER, &user);
  std::string who = user != nullptr ? user : "?";
  ssh_string_free_char(user);
  return fail(ExitCode::launch, fmt::format("authentication failed for user {} (tried {})", who, tried));
}

Result<void> authenticate(ssh_session session, const SshSection& options) {
  AuthSteps steps(session, options.connect_timeout);
  auto result = authenticate_with(session, options, steps);
  if (steps.ended() == Step::stopped) {
    return fail(stop::error("authenticating"));
  }
  if (steps.ended() == Step::timed_out) {
    return fail(ExitCode::launch, fmt::format("authentication did not finish within {} (connect_timeout)",
                                              format_duration(options.connect_timeout)));
  }
  return result;
}

// TCP connect and key exchange, bounded by connect_timeout and the stop token.
Result<void> connect_and_exchange_keys(ssh_session session, const SshSection& options, const Host& host) {
  int rc = SSH_ERROR;
  Step how = step_until_done(session, [&] { return ssh_connect(session); }, SSH_AGAIN,
                             Clock::now() + options.connect_timeout, rc);
  if (how == Step::stopped) {
    return fail(stop::error("connecting"));
  }
  std::string why = how == Step::timed_out ? fmt::format("Timeout connecting to {}", host.address)
                                           : last_error(session);
  if (how == Step::timed_out || rc != SSH_OK) {
    return fail(ExitCode::launch,
                fmt::format("cannot connect: {} (is sshd running there? check the name, [ssh] port "
                            "and connect_timeout)",
                            why));
  }
  return {};
}

} // namespace


std::string expand_home(const std::string& path) {
  if (path == "~" || path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + path.substr(1);
  }
  return path;
}

std::string host_key_fingerprint(ssh_session session) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(session, &key) != SSH_OK) {
    return {};
  }
  unsigned char* hash = nullptr;
  size_t length = 0;
  std::string text;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) == SSH_OK) {
    char* printable = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
    if (printable != nullptr) {
      text = printable;
      ssh_string_free_char(printable);
    }
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return text;
}

Result<SshSessionPtr> ssh_connect_direct(const SshSection& options, const Host& host) {
  SshSessionPtr session(ssh_new());
  if (!session) {
    return fail(ExitCode::launch, "cannot create an ssh session");
  }
  if (auto set = set_options(session.get(), options, host); !set) {
    return fail(set.error());
  }
  // Non-blocking until authenticated, so that Ctrl-C and the job's deadline
  // end a connection to a black-holed or slow host at once.
  ssh_set_blocking(session.get(), 0);
  if (auto connected = connect_and_exchange_keys(session.get(), options, host); !connected) {
    return fail(connected.error());
  }
  if (auto verified = verify_host_key(session.get(), options); !verified) {
    return fail(verified.error());
  }
  if (auto authenticated = authenticate(session.get(), options); !authenticated) {
    return fail(authenticated.error());
  }
  ssh_set_blocking(session.get(), 1);
  set_keepalive(session.get(), options.connect_timeout);
  return session;
}

Millis remote_answer_timeout(const SshSection& options) {
  return std::max(options.connect_timeout, Millis{30'000});
}

Result<HostSessionPtr> ssh_open(const SshSection& options, const Host& host) {
  if (!options.broker.empty()) {
    // The broker may first connect to the host (connect_timeout) for trials ahead of this one.
    return broker_open(options, host, remote_answer_timeout(options) + options.connect_timeout);
  }
  auto session = ssh_connect_direct(options, host);
  if (!session) {
    return fail(session.error());
  }
  return own_session(std::move(*session));
}

} // namespace ddl
