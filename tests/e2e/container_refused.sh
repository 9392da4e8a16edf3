#!/usr/bin/env bash
# [container] words that would run something other than the program are
# refused when the job is loaded, exit 2 with FILE:LINE:COL (issue 40):
# {command} inside a word was left as text, the program never ran, exit 0
# (item 6); an image that starts with '-' was read by podman as an option,
# "--privileged" made the rank's container privileged (item 7).
source "$(dirname "$0")/common.inc"

cat >"$t/inword.toml" <<'TOML'
[job]
command = ["sh", "-c", "echo ran"]
[container]
image = "team/train:1.4"
runtime = ["sh", "-c", "echo wrapped: {command}", "{image}"]
TOML
expect_exit 2 "$DDL" run "$t/inword.toml" --np 1
expect_contains "$t/err" "ddl: error: $t/inword.toml:5:24: container.runtime[2]: 'echo wrapped: {command}': {command} must be a word of its own (the program's words go there, one for one); to run them from a shell, write \"sh\", \"-c\", \"...; exec \\\"\$@\\\"\", \"sh\", \"{command}\""
expect_not_contains "$t/out" "wrapped"

cat >"$t/option.toml" <<'TOML'
[job]
command = ["sh", "-c", "echo ran"]
[container]
image = "--privileged"
TOML
expect_exit 2 "$DDL" run "$t/option.toml" --np 1
expect_contains "$t/err" "ddl: error: $t/option.toml:4:9: container.image: '--privileged' starts with '-' (a runtime would read it as an option); name an image, e.g. image = \"team/train:1.4\""
echo "ok: {command} inside a word and an option-like image refused at load"
