#!/usr/bin/env bash
# Host keys over ssh (changed: fatal with the SHA256 fingerprint; unknown:
# refused, or recorded with accept-new; "no": warns), an unreachable address
# (bounded, named) and a command missing on the hosts: exit 3 before any rank.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 2
known=$NETNS_DIR/known_hosts
h2=${NETNS_ADDRS[1]}
spec=$(netns_hostspec 1)
good=$(cat "$known")

# Changed: host 2 listed with host 1's key.
sed -i "2s|.*|$h2 $(cut -d' ' -f1-2 "$NETNS_DIR/h1_key.pub")|" "$known"
expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- true
expect_contains "$t/err" "$h2: host key has CHANGED"
expect_contains "$t/err" "$(ssh-keygen -lf "$NETNS_DIR/h2_key.pub" | cut -d' ' -f2)"

# Unknown: refused by default.
grep -v "^$h2 " <<<"$good" >"$known"
expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- true
expect_contains "$t/err" "$h2: host key SHA256:"
expect_contains "$t/err" "is unknown"

# host_key_check = "no": runs, warns, records nothing.
sed 's/^\[ssh\]$/[ssh]\nhost_key_check = "no"/' "$NETNS_DIR/ssh.toml" >"$t/no.toml"
expect_exit 0 ddl_ssh run "$t/no.toml" -H "$spec" --backend ssh -- true
expect_contains "$t/err" "NOT verified"
if grep -q "^$h2 " "$known"; then fail "host_key_check = no recorded a key"; fi

# accept-new: runs and records the key.
sed 's/^\[ssh\]$/[ssh]\nhost_key_check = "accept-new"/' "$NETNS_DIR/ssh.toml" >"$t/new.toml"
expect_exit 0 ddl_ssh run "$t/new.toml" -H "$spec" --backend ssh -- true
grep -q "^$h2 " "$known" || fail "accept-new did not record $h2 in known_hosts"
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- true

# Unreachable: nothing answers on .200 of the test net. connect_timeout (2s)
# ends the attempt, which libssh names "Timeout"; without it the kernel's
# "No route to host" would come instead. The wall-clock bound only guards
# against a hang: the other two hosts' logins share 2 cores with other tests.
start=$SECONDS
expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec,$NETNS_NET.200" --backend ssh -- true
((SECONDS - start < 60)) || fail "an unreachable host took $((SECONDS - start))s"
expect_contains "$t/err" "$NETNS_NET.200: cannot connect: Timeout connecting to $NETNS_NET.200"
expect_contains "$t/err" "cannot start on 1 of 3 hosts"

# A command missing on every host: each host named, exit 3.
expect_exit 3 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- ddl-no-such-command
expect_contains "$t/err" "${NETNS_ADDRS[0]}: command not found: ddl-no-such-command"
expect_contains "$t/err" "$h2: command not found: ddl-no-such-command"
