#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [container] with real podman on this machine (issue 31): each rank runs in
# the image with its env (values never on a command line), its mounts and
# workdir; the gang semantics hold: a failing rank, Ctrl-C, the watchdog's
# end of a stalled attempt and kill -9 of ddl leave no container and no
# process behind.
source "$(dirname "$0")/common.inc"
source "$(dirname "$0")/run_common.inc"
source "$(dirname "$0")/container_podman.inc"
pod_up

secret="pod-${marker}-s3cr3t"
printf 'SECRET="%s"\n' "$secret" >"$t/.env"

# job_file NAME COMMAND [TOML...]: a job run in the image, $t mounted.
job_file() {
  local name=$1 command=$2; shift 2
  cat >"$t/$name.toml" <<EOF
[job]
command = ["sh", "-c", "$command"]
env_file = ".env"
grace = "1s"
$(printf '%s\n' "$@")
[container]
image = "$pod_image"
mounts = ["$t:$t"]
workdir = "/tmp"
EOF
}

# wait_seen N PID: until N files $t/seen-* exist; fails when ddl exits first.
wait_seen() {
  local i
  for ((i = 0; i < 600; i++)); do
    (($(compgen -G "$t/seen-*" | wc -l) >= $1)) && return 0
    kill -0 "$2" 2>/dev/null || { cat "$t/err"; fail "ddl ended before $1 ranks started"; }
    sleep 0.05
  done
  fail "the ranks never started: $(cat "$t/err")"
}

# start_spinning NAME NP: job NAME$marker with NP ranks that spin until
# killed, started in the background ($ddl_pid) and waited for until all run.
start_spinning() {
  rm -f "$t"/seen-*
  job_file "$1$marker" "echo up >$t/seen-\$DDL_RANK; while :; do sleep 0.1; done"
  "$DDL" run "$t/$1$marker.toml" --np "$2" >"$t/out" 2>"$t/err" &
  ddl_pid=$!
  wait_seen "$2" "$ddl_pid"
}

# In the image, with the env file's value, in the container's workdir; the
# value on no process's command line (podman's and conmon's included).
job_file "run$marker" "echo \\\"\$DDL_RANK \$SECRET \$(cat /ddl-image) \$(pwd)\\\" >$t/seen-\$DDL_RANK; while [ ! -e $t/go ]; do sleep 0.05; done"
"$DDL" run "$t/run$marker.toml" --np 2 >"$t/out" 2>"$t/err" &
ddl_pid=$!
wait_seen 2 "$ddl_pid"
for cmdline in /proc/[0-9]*/cmdline; do
  if { tr '\0' ' ' <"$cmdline"; } 2>/dev/null | grep -qF -- "$secret"; then
    fail "the env file's value is on a command line: $({ tr '\0' ' ' <"$cmdline"; } 2>/dev/null)"
  fi
done
[[ $(pod_left | grep -c "^ddl-run$marker-[01]-a0-[0-9a-f]\{8\} Up") == 2 ]] || fail "not 2 containers: $(pod_left)"
touch "$t/go"
wait "$ddl_pid" || fail "ddl failed: $(cat "$t/err")"
for r in 0 1; do
  [[ $(cat "$t/seen-$r") == "$r $secret ddl test image /tmp" ]] || fail "rank $r saw: $(cat "$t/seen-$r")"
done
pod_none_left "a job that ended well"
expect_none_left
echo "ok: each rank ran in the image with its env, on no command line"

# A failing rank ends the gang; its peer ignores SIGTERM, so SIGKILL after
# grace kills its podman client: the guard removes the container.
rm -f "$t"/seen-*
job_file "fail$marker" "echo up >$t/seen-\$DDL_RANK; if [ \$DDL_RANK = 1 ]; then while [ ! -e $t/seen-0 ]; do sleep 0.05; done; echo failing >&2; exit 7; fi; trap '' TERM; while :; do sleep 0.1; done"
expect_exit 7 "$DDL" run "$t/fail$marker.toml" --np 2
expect_contains "$t/err" "rank 1 on localhost exited with code 7"
expect_contains "$t/err" "[1] failing"
pod_none_left "a failing rank (its peer ignoring SIGTERM)"
expect_none_left
echo "ok: a failing rank, and a peer killed after grace, leave no container"

# Ctrl-C: exit 130, every container gone.
start_spinning int 2
kill -INT "$ddl_pid"
got=0; wait "$ddl_pid" || got=$?
[[ $got == 130 ]] || fail "Ctrl-C: exit $got, not 130: $(cat "$t/err")"
pod_none_left "Ctrl-C"
expect_none_left
echo "ok: Ctrl-C leaves no container"

# A runtime client that dies while its container runs (as podman's does
# when a signal lands before its signal proxy is up): the rank fails, and
# the guard removes the container the client left running.
start_spinning cli 1
pkill -KILL -f "^podman run --rm --name ddl-cli$marker-0-" || fail "no podman client to kill"
got=0; wait "$ddl_pid" || got=$?
[[ $got == 137 ]] || fail "a killed client: exit $got, not 137: $(cat "$t/err")"
pod_none_left "a runtime client killed under a running container"
expect_none_left
echo "ok: a runtime client killed under its running container leaves no container"

# The watchdog: a stalled attempt is dumped (the signal reaches the
# program through podman) and ended with exit 5.
rm -f "$t"/seen-*
job_file "stall$marker" "trap 'echo dump asked >&2' USR1; echo up >$t/seen-\$DDL_RANK; while :; do sleep 0.1; done" \
  '[watchdog]' 'stall = "2s"' 'dump = "SIGUSR1"' 'dump_timeout = "2s"'
expect_exit 5 "$DDL" run "$t/stall$marker.toml" --np 1
expect_contains "$t/err" "dump asked"
pod_none_left "the watchdog's end of a stalled attempt"
expect_none_left
echo "ok: the watchdog's dump reaches the container; no container is left"

# kill -9 of ddl: the ranks' groups die (the lifeline), podman's clients
# with them; the guards remove the containers.
start_spinning kill 2
kill -9 "$ddl_pid"
wait "$ddl_pid" 2>/dev/null || true
pod_none_left "kill -9 of ddl"
expect_none_left 5
echo "ok: kill -9 of ddl leaves no container"
