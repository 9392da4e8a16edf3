// SPDX-License-Identifier: MIT
#pragma once

// A cheap look at the OpenSSH config files before asking libssh about every
// host: a config without any HostName line maps every name to itself.

#include "src/job/job.hpp"

namespace ddl {

// False only when no config file ddl reads ([ssh] config, then
// /etc/ssh/ssh_config, and the files they Include) has a HostName line; an
// unreadable file counts as one that may. True means: ask libssh per host.
bool ssh_config_may_set_hostname(const SshSection& options);

} // namespace ddl
