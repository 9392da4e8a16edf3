#!/usr/bin/env bash
# Installs what ddl needs from Debian's archive. `build`: to build ddl (with
# libpmix-dev's headers for the PMIx server); `test` (default): also the real
# peers the test suite drives (sshd, OpenMPI, MPICH and its headers beside it (Debian's
# alternatives keep Open MPI's mpirun and mpicc, priority 50 to 40), mpi4py, PyTorch, clang for the
# sanitizer and fuzzer builds, shells for completions, gdb for the watchdog's stack dumps, chromium to load the sweep report headless, Slurm and munge for the
# Slurm test bed, and the benches' peers: pdsh, hyperfine, iperf3), then the Python
# environment .venv/ of the real frameworks (scripts/venv.sh: TensorFlow, JAX, DeepSpeed,
# Horovod built against Debian's torch, whose headers come with libtorch-dev, and py-spy; pybind11-dev for the op DeepSpeed compiles on
# the CPU at init_distributed()).
set -euo pipefail
mode=${1:-test}
build_pkgs=(cmake ninja-build g++ pkg-config ccache libcli11-dev libtomlplusplus-dev
  libfmt-dev libspdlog-dev libssh-dev libssl-dev libre2-dev nlohmann-json3-dev catch2 openmpi-bin libopenmpi-dev
  libpmix-dev)
test_pkgs=(clang libclang-rt-14-dev python3 python3-venv python3-dev python3-torch libtorch-dev pybind11-dev python3-mpi4py mpich openssh-server openssh-client
  libmpich-dev iproute2 iptables procps psmisc time groff man-db zsh fish bash-completion pdsh iperf3 hyperfine parallel gdb chromium
  slurmctld slurmd slurm-client munge podman runc busybox-static util-linux)
pkgs=("${build_pkgs[@]}")
[[ $mode == test ]] && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  # The postinst scripts of munge, slurmd and slurmctld would start system-wide
  # daemons; a temporary policy-rc.d (exit 101) keeps them stopped.
  policy=/usr/sbin/policy-rc.d made_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy" && made_policy=1
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if ((made_policy)); then $sudo rm -f "$policy"; fi
fi
if [[ $mode == test ]]; then "$(dirname "$0")/venv.sh"; fi
