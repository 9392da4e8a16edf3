// SPDX-License-Identifier: MIT
#pragma once

// One SSH connection to one host: options from [ssh] and the OpenSSH config,
// host-key verification against known_hosts, agent and key authentication.
// Only code under backends/ssh includes libssh.

#include <memory>
#include <string>

#include <libssh/libssh.h>

#include "backends/ssh/host_session.hpp"
#include "src/util/error.hpp"
#include "src/inventory/inventory.hpp"
#include "src/job/job.hpp"

namespace ddl {

// "~/x" -> "$HOME/x".
std::string expand_home(const std::string& path);

// Connects to `host`, verifies its key and authenticates. The error message
// is one line about this host (no host name prefix); ExitCode::launch.
// Warnings (host_key_check = "no", a key recorded by accept-new) go to the
// log. The session has TCP keepalives set so that a host that stops
// answering for connect_timeout is noticed.
Result<SshSessionPtr> ssh_connect_direct(const SshSection& options, const Host& host);

// The connection a launch uses: through the sweep's session broker when
// [ssh] broker names one (a trial of `ddl sweep`), else ssh_connect_direct.
Result<HostSessionPtr> ssh_open(const SshSection& options, const Host& host);

// The host name the OpenSSH config (and [ssh]) make of `name`: its HostName
// when an entry gives one, else `name`. Nothing is connected.
std::string ssh_config_hostname(const SshSection& options, const std::string& name);

// How long a command ddl runs on a connected host before the ranks (the
// launch check, `ddl hosts --check`'s probe) may take to answer:
// connect_timeout, but at least 30s, as a loaded host starts it slowly.
Millis remote_answer_timeout(const SshSection& options);

// "SHA256:..." of the server's host key, or "" when unavailable.
std::string host_key_fingerprint(ssh_session session);

} // namespace ddl
