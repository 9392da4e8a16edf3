#!/usr/bin/env bash
# Builds .venv/ in the repo root, the Python environment of the tests and benches
# (TensorFlow, JAX, DeepSpeed, Horovod, py-spy), from scripts/requirements.txt: Debian's
# python3 with its site-packages visible, so Debian's torch and mpi4py stay the ones in
# use. A rerun with the same requirements is a no-op (a stamp holds their hash); pip's
# cache (~/.cache/pip, Horovod's built wheel too) makes a rebuild on the same machine fast.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=scripts/requirements.txt venv=.venv
stamp=$venv/requirements.sha256
hash=$(sha256sum "$requirements" | cut -d' ' -f1)
[[ -f $stamp && $(<"$stamp") == "$hash" ]] && exit 0
/usr/bin/python3 -m venv --system-site-packages "$venv"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps)
grep -v '^horovod' "$requirements" | "${pip[@]}" -r /dev/stdin
# Horovod has no wheel on PyPI: built here against Debian's torch (hence no build
# isolation, which would hide it), with gloo and MPI, without TensorFlow and MXNet.
grep '^horovod' "$requirements" | HOROVOD_WITH_PYTORCH=1 HOROVOD_WITH_GLOO=1 HOROVOD_WITH_MPI=1 \
  HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 "${pip[@]}" --no-build-isolation -r /dev/stdin
echo "$hash" >"$stamp"
