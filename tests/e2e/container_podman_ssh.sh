#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [container] over the ssh backend with real podman (issue 31): two hosts
# (network namespaces with their own sshd), each rank in the image with its
# env on its host (no GPU asked of podman: the hosts have none, issue 40); kill -9 of ddl drops the connections, the shims end the
# ranks and the guards on the hosts remove every container.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
source "$(dirname "$0")/container_podman.inc"
netns_up 2
pod_up
trap 'rc=$?; pod_down; netns_down; rm -rf "$t"; exit $rc' EXIT
# `ip netns exec` gave each sshd a fresh /sys without the cgroup mounts that
# runc needs: mount the machine's hierarchies again in its mount namespace.
mount_cgroups='mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup || exit 1
while read -r dir type opts; do
  mkdir -p "$dir"
  if [ "$type" = cgroup2 ]; then mount -t cgroup2 none "$dir"; else mount -t cgroup -o "${opts#rw,}" cgroup "$dir"; fi || exit 1
done'
cgroups=$(grep ' - cgroup2\? ' /proc/self/mountinfo | awk '{ print $5, $9, $NF }')
for ((i = 1; i <= 2; i++)); do
  sshd_pid=$(pgrep -f -- "$NETNS_DIR/h${i}_sshd" | head -1)
  [[ -n $sshd_pid ]] || fail "no sshd for h$i"
  nsenter -t "$sshd_pid" -m sh -c "$mount_cgroups" <<<"$cgroups" ||
    fail "cannot mount the cgroups in h$i's mount namespace"
done

job=$t/ssh.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<EOF
[job]
command = ["sh", "-c", "echo \"\$DDL_RANK \$DDL_HOST \$(cat /ddl-image)\" >$t/seen-\$DDL_RANK; while :; do sleep 0.1; done"]
grace = "1s"
[container]
image = "$pod_image"
mounts = ["$t:$t"]
EOF
# The hosts' podman reads this run's private configuration from the rank's env.
ip netns exec "$NETNS_CLIENT" "$DDL" run "$job" -H "$(netns_hostspec 1)" --backend ssh \
  -x "CONTAINERS_CONF=$CONTAINERS_CONF" -x "CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF" \
  >"$t/out" 2>"$t/err" &
ddl_pid=$!
for ((i = 0; i < 600; i++)); do
  (($(compgen -G "$t/seen-*" | wc -l) >= 2)) && break
  kill -0 "$ddl_pid" 2>/dev/null || fail "ddl ended before the ranks started: $(cat "$t/err")"
  sleep 0.05
done
(($(compgen -G "$t/seen-*" | wc -l) >= 2)) || fail "the ranks never started: $(cat "$t/err")"
[[ $(cat "$t/seen-0") == "0 ${NETNS_ADDRS[0]} ddl test image" ]] || fail "rank 0 saw: $(cat "$t/seen-0")"
[[ $(cat "$t/seen-1") == "1 ${NETNS_ADDRS[1]} ddl test image" ]] || fail "rank 1 saw: $(cat "$t/seen-1")"
[[ $(pod_left | grep -c " Up") == 2 ]] || fail "not 2 containers up: $(pod_left)"
echo "ok: each rank ran in the image on its ssh host"

kill -9 "$ddl_pid"
wait "$ddl_pid" 2>/dev/null || true
pod_none_left "kill -9 of ddl with the ssh backend"
echo "ok: kill -9 of ddl leaves no container on the ssh hosts"
