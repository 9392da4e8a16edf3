#!/usr/bin/env bash
# A HostName set in a file the ssh config Includes still names the host's
# address: ddl only skips asking libssh per host (100k hosts) when no config
# file it reads, nor any file those Include, sets a HostName.
source "$(dirname "$0")/common.inc"

home=$t/home
mkdir -p "$home/.ssh/conf.d"
printf 'Host node1\n  HostName 198.18.7.1\n' >"$home/.ssh/conf.d/nodes.conf"
printf 'Include %s/.ssh/conf.d/*.conf\n' "$home" >"$home/.ssh/config"
printf '[ssh]\nconfig = "~/.ssh/config"\n' >"$t/job.toml"

HOME=$home expect_exit 0 "$DDL" render "$t/job.toml" -H node1:1,node2:1 --backend ssh \
  --format env --rank 1 -- true
expect_contains "$t/out" "MASTER_ADDR=198.18.7.1"

# Without the include the alias is just a name.
printf '# nothing\n' >"$home/.ssh/config"
HOME=$home expect_exit 0 "$DDL" render "$t/job.toml" -H node1:1,node2:1 --backend ssh \
  --format env --rank 1 -- true
expect_contains "$t/out" "MASTER_ADDR=node1"
echo ok
