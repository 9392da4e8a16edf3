#!/usr/bin/env bash
# 8 ranks over ssh on 4 hosts (network namespaces, each with its own sshd,
# host key and hostname): placement, env values byte for byte, and the job
# token in no process's command line on any host.
source "$(dirname "$0")/common.inc"
source "$DDL_SOURCE_DIR/tests/netns/hosts.inc"
netns_up 4
spec=$(netns_hostspec 2)

# Placement: ranks fill hosts in order, 2 per host.
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "$spec" --backend ssh -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname) local=$DDL_LOCAL_RANK"'
for r in 0 1 2 3 4 5 6 7; do
  expect_contains "$t/out" "[$r] rank=$r host=h$((r / 2 + 1)) local=$((r % 2))"
done

# 10 ranks on one host: more than one connection (sshd's MaxSessions is 10).
expect_exit 0 ddl_ssh run "$NETNS_DIR/ssh.toml" -H "${NETNS_ADDRS[0]}:10" --backend ssh -- \
  sh -c 'echo "rank=$DDL_RANK host=$(hostname)"'
for r in 0 1 2 3 4 5 6 7 8 9; do expect_contains "$t/out" "[$r] rank=$r host=h1"; done

# Env values byte for byte.
job=$t/env.toml
cp "$NETNS_DIR/ssh.toml" "$job"
cat >>"$job" <<'TOML'
[job]
env = { V_SPACE = "two  spaces ", V_QUOTES = "it's \"quoted\"", V_DOLLAR = "$HOME ${PATH} $(id) `id`", V_NL = "line1\nline2\n", V_BS = "back\\slash \\n", V_TAB = "\ttab", V_GLOB = "*?[a]~", V_EMPTY = "" }
TOML
names=(V_SPACE V_QUOTES V_DOLLAR V_NL V_BS V_TAB V_GLOB V_EMPTY)
want=("two  spaces " "it's \"quoted\"" '$HOME ${PATH} $(id) `id`' $'line1\nline2\n' 'back\slash \n' $'\ttab' '*?[a]~' "")
mkdir "$t/env"
expect_exit 0 ddl_ssh run "$job" -H "$(netns_hostspec 1)" --backend ssh -- \
  sh -c 'for n in '"${names[*]}"'; do eval "printf %s \"\$$n\"" >"'"$t"'/env/$DDL_RANK.$n"; done'
for r in 0 1 2 3; do
  for i in "${!names[@]}"; do
    got=$(cat "$t/env/$r.${names[$i]}"; echo x); got=${got%x}
    [[ $got == "${want[$i]}" ]] || fail "rank $r ${names[$i]}: got $(printf %q "$got"), want $(printf %q "${want[$i]}")"
  done
done

# The job token and a secret from the job file never appear in any command
# line, on any host, while the ranks run.
secret="ddl-secret-$$-$RANDOM$RANDOM"
cp "$NETNS_DIR/ssh.toml" "$t/secret.toml"
printf '[job]\nenv = { MY_SECRET = "%s" }\n' "$secret" >>"$t/secret.toml"
mkdir "$t/tok"
ddl_ssh run "$t/secret.toml" -H "$spec" --backend ssh -- \
  sh -c 'printf "%s\n%s\n" "$DDL_TOKEN" "$MY_SECRET" >"'"$t"'/tok/$DDL_RANK.tmp"; mv "'"$t"'/tok/$DDL_RANK.tmp" "'"$t"'/tok/$DDL_RANK"; sleep 3' \
  >"$t/out" 2>"$t/err" &
runner=$!
wait_files 8 "$t/tok/[0-7]"
token=$(sed -n 1p "$t/tok/0")
[[ -n $token ]] || fail "rank 0 got no DDL_TOKEN"
[[ $(sed -n 2p "$t/tok/0") == "$secret" ]] || fail "rank 0 did not get MY_SECRET"
for f in /proc/[0-9]*/cmdline; do
  line=$({ tr "\0" " " <"$f"; } 2>/dev/null) || continue
  if [[ $line == *"$token"* || $line == *"$secret"* ]]; then fail "a secret is in $f: $line"; fi
done
wait "$runner" || fail "ddl run failed: $(cat "$t/err")"
