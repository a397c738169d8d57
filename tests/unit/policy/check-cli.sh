#!/bin/sh
# SPDX-License-Identifier: MIT
# `sbxtrace check` from the command line; one case per invocation (meson registers each).
# usage: check-cli.sh SBXTRACE CASE
set -u
sbx=$1 case=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/policy-cli.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/ws"
fail() {
	echo "$*"
	echo "--- stderr:"
	cat "$scratch/err" 2>/dev/null
	exit 1
}

case $case in
help)
	"$sbx" check --help >"$scratch/out" 2>"$scratch/err" || fail "check --help failed"
	grep -q "Usage: sbxtrace check" "$scratch/out" || fail "no usage line"
	grep -q -- "--workspace" "$scratch/out" || fail "-w is not documented"
	;;
missing-file)
	"$sbx" check "$scratch/nope.toml" >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 1 ] || fail "exit status is not 1"
	grep -qF "$scratch/nope.toml: cannot read policy: No such file or directory" \
		"$scratch/err" || fail "no message naming the file"
	;;
no-policy)
	"$sbx" check >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 1 ] || fail "exit status is not 1"
	grep -q "needs a POLICY" "$scratch/err" || fail "no message"
	;;
unknown-override)
	"$sbx" check -w "$scratch/ws" -s limits.wal_time=5s standard >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 1 ] || fail "exit status is not 1"
	grep -qF -- "-s override: limits.wal_time: unknown key 'wal_time'; did you mean 'wall_time'?" \
		"$scratch/err" || fail "no message"
	;;
bad-override-value)
	"$sbx" check -w "$scratch/ws" -s network.mode=everything standard >"$scratch/out" \
		2>"$scratch/err"
	[ $? -eq 1 ] || fail "exit status is not 1"
	grep -qF "network.mode: unknown value 'everything'" "$scratch/err" || fail "no message"
	;;
overrides)
	"$sbx" check -w "$scratch/ws" -s limits.wall_time=5s -s network.mode=loopback \
		-s tracer.landlock=false -s limits.tasks=9 standard >"$scratch/out" 2>"$scratch/err" ||
		fail "check failed"
	grep -qx 'wall_time = "5s"' "$scratch/out" || fail "wall_time not overridden"
	grep -qx 'mode = "loopback"' "$scratch/out" || fail "network.mode not overridden"
	grep -qx 'landlock = false' "$scratch/out" || fail "landlock not overridden"
	grep -qx 'tasks = 9' "$scratch/out" || fail "tasks not overridden"
	;;
round-trip)
	# every preset: check -> file -> check gives the same text, and so does a file using
	# extends, variables and overrides
	cat >"$scratch/mine.toml" <<-'EOT'
	extends = ["standard"]
	[[mount]]
	path = "/home/$${odd}"
	source = "${WORKSPACE}"
	mode = "ro"
	[[rule]]
	path = "/workspace/**/*.key"
	access = "hide"
	level = "secret"
	[network]
	mode = "allowlist"
	allow = ["example.com:443", "[2001:db8::]/32:443"]
	ratchet = { secret = "none" }
	[audit]
	log = "${PWD}/audit.jsonl"
	EOT
	for p in permissive standard strict python node shell "$scratch/mine.toml"; do
		"$sbx" check -w "$scratch/ws" -s limits.output=3MiB "$p" >"$scratch/a.toml" \
			2>"$scratch/err" || fail "check $p failed"
		"$sbx" check "$scratch/a.toml" >"$scratch/b.toml" 2>"$scratch/err" ||
			fail "check of the output of $p failed"
		cmp "$scratch/a.toml" "$scratch/b.toml" || fail "$p does not round-trip"
		grep -qx 'output = "3MiB"' "$scratch/b.toml" || fail "override lost in $p"
	done
	grep -qF 'path = "/home/$${odd}"' "$scratch/b.toml" || fail "'\$' not escaped"
	;;
workspace-not-a-dir)
	: >"$scratch/file"
	"$sbx" check -w "$scratch/file" standard >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 1 ] || fail "exit status is not 1"
	grep -q "workspace '.*': Not a directory" "$scratch/err" || fail "no message"
	"$sbx" check -w "$scratch/nope" standard >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 1 ] || fail "exit status is not 1"
	grep -q "No such file or directory" "$scratch/err" || fail "no message"
	;;
ptrace-never-note)
	# DESIGN: without ptrace the post-exec check is impossible, and check must say so
	"$sbx" check -q -w "$scratch/ws" -s tracer.ptrace=never strict >"$scratch/out" \
		2>"$scratch/err" || fail "check failed"
	grep -q 'ptrace = "never": exec checks cannot verify' "$scratch/err" || fail "no warning"
	# strict has a cpu_time budget: short children reaped by the kernel escape it then
	grep -q 'ptrace = "never": cpu_time is not exact' "$scratch/err" || fail "no cpu_time warning"
	"$sbx" check -q -w "$scratch/ws" strict >"$scratch/out" 2>"$scratch/err" ||
		fail "check failed"
	[ ! -s "$scratch/err" ] || fail "a warning without ptrace = never"
	;;
run-empty-command)
	"$sbx" run -w "$scratch/ws" standard -- >"$scratch/out" 2>"$scratch/err"
	status=$?
	if grep -q "not built yet" "$scratch/err"; then
		echo "sbxtrace run is not built yet" >&2
		exit 77
	fi
	[ $status -eq 125 ] || fail "exit status $status, expected 125"
	[ -s "$scratch/err" ] || fail "no message"
	;;
*)
	fail "unknown case $case"
	;;
esac
exit 0
