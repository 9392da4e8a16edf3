#!/usr/bin/env bash
# ddl init: writes the built-in templates byte for byte, never overwrites
# without --force, and writes the Kubernetes manifest next to the job file.
source "$(dirname "$0")/common.inc"
src=$DDL_SOURCE_DIR/templates
cd "$t"

expect_exit 0 "$DDL" init
cmp job.toml "$src/torch.toml" || fail "default template is not templates/torch.toml"
expect_contains "$t/out" "wrote job.toml"

# A second init must not touch the file, and must say what to do instead.
echo "# mine" >job.toml
expect_exit 2 "$DDL" init
expect_contains "$t/err" "ddl: error: 'job.toml' already exists; not overwriting it."
expect_contains "$t/err" "--force"
[[ $(cat job.toml) == "# mine" ]] || fail "init overwrote job.toml without --force"
expect_exit 0 "$DDL" init --force
cmp job.toml "$src/torch.toml" || fail "--force did not write the template"

for name in torch tensorflow horovod jax mpi sweep; do
  expect_exit 0 "$DDL" init --template "$name" "$name-job.toml"
  cmp "$name-job.toml" "$src/$name.toml" || fail "template $name differs from templates/$name.toml"
done

# mpi: the watchdog's stall against a rank hung in MPI_Finalize, and [mpirun].
grep -q '^\[watchdog\]' mpi-job.toml && grep -q '^stall = ' mpi-job.toml || fail "the mpi template has no [watchdog] stall"
grep -q '^\[mpirun\]' mpi-job.toml || fail "the mpi template has no [mpirun]"

expect_exit 2 "$DDL" init --template pytorch x.toml
expect_contains "$t/err" "pytorch"
[[ ! -e x.toml ]] || fail "an unknown template wrote a file"

# kubernetes: the job file and its manifest, named after each other.
if [[ -f $src/kubernetes.toml && -f $src/kubernetes.yaml ]]; then
  mkdir k8s
  expect_exit 0 "$DDL" init -t kubernetes k8s/train.toml
  expect_contains "$t/out" "wrote k8s/train.toml"
  expect_contains "$t/out" "wrote k8s/train.yaml"
  grep -q '^kind: Job' k8s/train.yaml || fail "manifest has no Job"
  grep -q '^kind: Service' k8s/train.yaml || fail "manifest has no Service"
  expect_not_contains k8s/train.toml "kubernetes.yaml"
  # Either file existing stops both from being written.
  rm k8s/train.toml
  expect_exit 2 "$DDL" init -t kubernetes k8s/train.toml
  expect_contains "$t/err" "'k8s/train.yaml' already exists"
  [[ ! -e k8s/train.toml ]] || fail "init wrote the job file although the manifest exists"
fi

# Every template is a valid job as written: the plan of a dry run.
for name in torch tensorflow horovod jax mpi sweep; do
  expect_exit 0 "$DDL" run "$name-job.toml" --dry-run
  expect_contains "$t/out" "job $name-job:"
done
# And actually runs: the mpi template's command is a plain echo.
expect_exit 0 timeout 30 "$DDL" run mpi-job.toml
for r in 0 1 2 3; do expect_contains "$t/out" "[$r] rank $r of 4 on"; done
