#!/usr/bin/env bash
# [tensorflow] success (issue 39). Real TensorFlow's ParameterServerStrategy
# with chief + 2 workers + 1 ps on 4 namespace hosts: the ps and the workers
# serve in server.join() forever, the chief trains and ends, and the job
# ends with it, exit 0 (success = "chief", the default where there is a
# chief; before it, ddl waited on the servers until its timeout). Then the
# policy's failure cases with stand-in ranks: a ps that dies first fails the
# job, a chief that fails fails the job, and success = "all" waits for every
# rank.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
python=$(framework_python tensorflow)
script=$DDL_SOURCE_DIR/tests/fixtures/clients/tf_parameter_server.py
netns_up 4
spec=$(netns_hostspec 1)
write_job() {  # write_job COMMAND_TOML [EXTRA_TOML]
  cat >"$t/job.toml" <<TOML
[job]
frameworks = ["tensorflow"]
command = $1
grace = "2s"
env = { TF_CPP_MIN_LOG_LEVEL = "3", CUDA_VISIBLE_DEVICES = "" }
[tensorflow]
ps = 1
${2:-}
TOML
  cat "$NETNS_DIR/ssh.toml" >>"$t/job.toml"
}

write_job "[\"$python\", \"$script\"]"
DDL_TIMEOUT=400 expect_exit 0 ddl_ssh run "$t/job.toml" -H "$spec" --backend ssh
expect_contains "$t/out" "[0] chief: trained 10 steps on 1 ps, last loss "
expect_contains "$t/out" "[3] ps 0: serving"
expect_contains "$t/err" "ddl: rank 0 (the TensorFlow chief) ended; stopping the 3 rank(s) still serving"
expect_not_contains "$t/err" "ddl: error:"
echo "ok: ParameterServerStrategy (chief, 2 workers, 1 ps) ends with its chief, exit 0"

# Stand-ins: rank 0 is the chief, 1 and 2 the workers, 3 the ps.
roles='case $(echo "$TF_CONFIG" | grep -o "\"type\":\"[a-z]*\"") in'
write_job "[\"sh\", \"-c\", '$roles *chief*) sleep 3; exit 0;; *ps*) exit 3;; *) exec sleep 600;; esac']"
DDL_TIMEOUT=60 expect_exit 3 ddl_ssh run "$t/job.toml" -H "$spec" --backend ssh
expect_contains "$t/err" "ddl: error: rank 3 on "
expect_not_contains "$t/err" "(the TensorFlow chief) ended"
echo "ok: a ps that dies before the chief ends fails the job (exit 3)"

write_job "[\"sh\", \"-c\", '$roles *chief*) sleep 1; exit 4;; *) exec sleep 600;; esac']"
DDL_TIMEOUT=60 expect_exit 4 ddl_ssh run "$t/job.toml" -H "$spec" --backend ssh
expect_contains "$t/err" "ddl: error: rank 0 on "
echo "ok: a chief that fails fails the job (exit 4)"

write_job "[\"sh\", \"-c\", '$roles *chief*) exit 0;; *) exec sleep 600;; esac']" 'success = "all"'
sed -i 's/^grace = "2s"$/grace = "2s"\ntimeout = "5s"/' "$t/job.toml"
DDL_TIMEOUT=60 expect_exit 124 ddl_ssh run "$t/job.toml" -H "$spec" --backend ssh
expect_not_contains "$t/err" "(the TensorFlow chief) ended"
echo "ok: success = \"all\" waits for every rank (here until the job's timeout, exit 124)"

write_job '["sh", "-c", "exit 0"]' 'success = "first"'
expect_exit 2 "$DDL" run "$t/job.toml" --dry-run
expect_contains "$t/err" "tensorflow.success: "
echo "ok: an unknown success policy is refused"
