#!/usr/bin/env bash
# isolate.sh SCRIPT: runs one e2e test script in namespaces of its own, so that
# no test sees another's processes, files or network (every e2e test's ctest
# command; tests/CMakeLists.txt).
#
#   pid    the script's processes are the only ones it sees (/proc is this
#          namespace's); "nothing left running" counts them all
#          (tests/e2e/run_common.inc), and whatever is left when the script
#          ends dies with the namespace's first process
#   mount  a fresh tmpfs on /tmp, /dev/shm, /run/user ($XDG_RUNTIME_DIR
#          when set), /run/netns and /etc/netns: private temp files, shared
#          memory, ddl's runtime folder and the test hosts' namespace names
#          (tests/netns/hosts.inc: every test may pick the same ones)
#   net    a network of its own: loopback, and an empty eth0 with the
#          default route (see network below)
#   ipc, uts
#
# As root: unshare(1) directly. As another user: a user namespace where that
# user is root sets the mounts up, and a second one nested in it maps the
# user back, so that the script runs as its own uid without privileges (tests
# that need root still skip, exit 77); where user namespaces are not allowed,
# the script runs as it is, not isolated (it says so on stderr; so as root
# where unshare is refused, in a container without the privilege).
# DDL_TEST_ISOLATION=off runs it as it is too (to debug a test by hand).
# Inside, DDL_TEST_ISOLATED=1.
set -euo pipefail

namespaces=(--pid --fork --kill-child --mount-proc --mount --propagation private --net --ipc --uts)

# private_tmp: a fresh /tmp, in which the folders of the source and build
# trees stay visible where they lie under /tmp (a checkout in /tmp).
private_tmp() {
  local keep=() dir
  for dir in "${DDL_SOURCE_DIR:-}" "${DDL_BUILD_DIR:-}"; do
    [[ $dir == /tmp/* ]] && keep+=("$dir")
  done
  if ((${#keep[@]})); then
    mkdir -p /run/ddl-isolate-tmp
    mount --bind /tmp /run/ddl-isolate-tmp
  fi
  mount -t tmpfs -o mode=1777 ddl-tmp /tmp
  for dir in "${keep[@]}"; do
    mkdir -p "$dir"
    mount --bind "/run/ddl-isolate-tmp/${dir#/tmp/}" "$dir"
  done
}

# private_mounts: the fresh folders listed at the top; as root in the
# namespace (the real one, or a user namespace's).
private_mounts() {
  private_tmp
  mount -t tmpfs -o mode=1777 ddl-shm /dev/shm
  [[ -d /run/user ]] && mount -t tmpfs -o mode=755 ddl-run-user /run/user
  if [[ -n ${XDG_RUNTIME_DIR:-} ]]; then
    mkdir -p "$XDG_RUNTIME_DIR"
    mount -t tmpfs -o mode=700 ddl-runtime "$XDG_RUNTIME_DIR"
  fi
  local dir
  for dir in /run/netns /etc/netns; do
    if mkdir -p "$dir" 2>/dev/null; then mount -t tmpfs -o mode=755 ddl-netns "$dir"; fi
  done
  network
}

# network: loopback up, and a stand-in for the machine's own interface (an
# empty bridge "eth0", 198.19.255.1/24, the default route through it; what is
# sent there goes nowhere; not every kernel has the dummy type): ddl picks
# the address it offers ranks by the route to them, and Open MPI's TCP
# transport needs an interface beside loopback. The test hosts
# (tests/netns/hosts.inc) pick a /24 not in use here.
network() {
  ip link set lo up
  ip link add eth0 type bridge
  ip addr add 198.19.255.1/24 dev eth0
  ip link set eth0 up
  ip route add default via 198.19.255.254 dev eth0
}

# run_script COMMAND...: runs the script's command while this namespace's
# first process waits for it. SIGTERM or SIGINT to that first process (ctest, a
# user) ends it at once, and with it every process of the namespace (the
# kernel gives a pid namespace's first process no signal it has no handler for).
run_script() {
  export DDL_TEST_ISOLATED=1
  local child rc=0
  # (A background job of a script starts with SIGINT and SIGQUIT ignored
  # and its stdin on /dev/null; the script starts as in the foreground.)
  env --default-signal=INT,QUIT "$@" <&0 &
  child=$!
  trap 'exit 143' TERM
  trap 'exit 130' INT
  wait "$child" || rc=$?
  return "$rc"
}

case ${1:-} in
  --inside-as-root)
    shift
    private_mounts
    run_script bash "$@"
    ;;
  --inside-as-user)
    # Root of a user namespace: mount, then give the script its own uid back.
    uid=$2 gid=$3; shift 3
    private_mounts
    # The script as that user again, in a user namespace nested in this one
    # (whose root is that user outside).
    run_script unshare --user --map-user="$uid" --map-group="$gid" -- bash "$@"
    ;;
  *)
    if [[ ${DDL_TEST_ISOLATION:-on} == off ]]; then exec bash "$@"; fi
    if [[ $(id -u) == 0 ]] && unshare "${namespaces[@]}" -- true 2>/dev/null; then
      exec unshare "${namespaces[@]}" -- bash "$0" --inside-as-root "$@"
    fi
    if [[ $(id -u) != 0 ]] && unshare --user --map-root-user "${namespaces[@]}" -- true 2>/dev/null; then
      exec unshare --user --map-root-user "${namespaces[@]}" -- \
        bash "$0" --inside-as-user "$(id -u)" "$(id -g)" "$@"
    fi
    echo "isolate.sh: namespaces are not allowed here: $1 runs without isolation" >&2
    exec bash "$@"
    ;;
esac
