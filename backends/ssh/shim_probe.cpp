// SPDX-License-Identifier: MIT
#include "backends/ssh/shim_probe.hpp"

#include <fmt/core.h>

#include "src/util/signals.hpp"
#include "src/util/text.hpp"

namespace ddl {

void SshConnection::drop_ended_relay() {
  if (relay && relay->closed()) {
    shim.reset();  // one of the relay's commands
    relay.reset();
  }
}

HostSession& SshConnection::shim_session() {
  drop_ended_relay();
  return relay ? static_cast<HostSession&>(*relay) : *session;
}

namespace {

// Why the shim ended or did not answer.
Error no_answer(const ShimChannel& shim, const HostSession& session, Millis timeout) {
  if (const auto& theirs = shim.refused_protocol()) {
    return Error{ExitCode::launch,
                 fmt::format("the shim there speaks protocol {}, this ddl speaks {}", *theirs, k_shim_protocol)};
  }
  if (shim.closed()) {
    std::string said(trim(shim.held_stderr()));
    return Error{ExitCode::launch, fmt::format("the shim ended (exit {}) before it answered{}",
                                               shim.exit_status().value_or(-1), said.empty() ? "" : ": " + said)};
  }
  if (session.closed()) {
    std::string why = session.error();
    return Error{ExitCode::launch, fmt::format("the connection closed before the shim answered: {}",
                                               why.empty() ? "host not answering" : why)};
  }
  return Error{ExitCode::launch, fmt::format("no answer within {:g}s", static_cast<double>(timeout.count()) / 1000.0)};
}

} // namespace

namespace {

// One try over the connection as it is; `broken` when the connection
// itself failed (not the shim).
Result<ShimAnswer> ask_once(const SshSection& ssh, SshConnection& kept, const std::string& request, bool& broken) {
  broken = false;
  HostSession& on = kept.shim_session();
  if (kept.shim && kept.shim->closed()) {
    kept.shim.reset();
  }
  if (!kept.shim) {
    kept.shim = std::make_unique<ShimChannel>(on);
  }
  if (auto asked = kept.shim->ask(request); !asked) {
    kept.shim.reset();
    broken = true;
    return fail(asked.error());
  }
  const Millis timeout = remote_answer_timeout(ssh);
  const ShimChannel& shim = *kept.shim;
  poll_until(on, timeout, [&shim] { return shim.answered() || shim.closed(); });
  if (stop::requested()) {
    kept.shim.reset();
    return fail(stop::error("probing the host"));
  }
  if (!kept.shim->answered()) {
    Error why = no_answer(*kept.shim, on, timeout);
    kept.shim.reset();
    broken = on.closed();
    return fail(std::move(why));
  }
  return kept.shim->take_answer();
}

} // namespace

Result<ShimAnswer> ask_shim(const SshSection& ssh, const Host& host, SshConnection& kept, std::string_view script,
                            const std::vector<std::string>& args) {
  auto request = shim_probe_request(script, args);
  if (!request) {
    return fail(request.error());
  }
  // A kept connection that died since its last use is reconnected once.
  for (bool reused = kept.session != nullptr;; reused = false) {
    if (!kept.session) {
      auto session = ssh_open(ssh, host);
      if (!session) {
        kept.error = session.error().message;
        return fail(session.error());
      }
      kept.session = std::move(*session);
    }
    bool broken = false;
    auto answer = ask_once(ssh, kept, *request, broken);
    if (answer || !broken || !reused || stop::requested()) {
      return answer;
    }
    // A kept relay that ended is dropped; its connection, if it lives, is asked next.
    const bool relay_only = kept.relay && !kept.session->closed();
    kept.shim.reset();
    kept.relay.reset();
    if (!relay_only) {
      kept.session.reset();
    }
  }
}

} // namespace ddl
