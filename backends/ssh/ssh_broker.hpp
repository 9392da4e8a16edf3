// SPDX-License-Identifier: MIT
#pragma once

// The session broker of `ddl sweep` over ssh (issue 32): it holds one SSH
// connection per host for all of the sweep's trials, and on it ddl's relay
// (relay_session.hpp) where the host has this ddl, so that a trial costs no
// handshake and no login shell (without the relay, one per host). Each trial's ssh backend asks it,
// over a unix socket, to open its channels (broker_wire.hpp has the
// protocol; broker_client.hpp the trial's side). A host's connection that
// dies is made again once, for the trials after; when that one dies too the
// host is lost, and its trials fail as they would have without the broker.
// A thread of the sweep process: no process to start or reap, and it ends
// with the sweep (whose trials then see their broker end, and fail).

#include <memory>
#include <string>

#include "src/job/job.hpp"  // SshSection
#include "src/util/error.hpp"

namespace ddl {

class SshBroker {
public:
  // Listens at DIR/.ssh-broker/socket (folder 0700, socket 0600; under the
  // per-user runtime folder when that path is too long for a unix socket)
  // and connects to each host, with `ssh`'s settings, when a trial first
  // asks for it. ExitCode::launch.
  static Result<std::unique_ptr<SshBroker>> start(const SshSection& ssh, const std::string& dir);
  // Closes every channel and connection, joins the threads, removes the socket.
  ~SshBroker();
  SshBroker(const SshBroker&) = delete;
  SshBroker& operator=(const SshBroker&) = delete;

  const std::string& socket() const;

  struct Impl;

private:
  explicit SshBroker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace ddl
