#!/bin/bash
# SPDX-License-Identifier: MIT
# A run whose tracer cannot seize the command fails before the command runs, and leaves
# nothing behind (tracer/run.c, seize_failed(): the seize fails after C has sent its
# listener, the path every run with ptrace on takes). A seccomp filter around sbxtrace
# refuses ptrace (tests/helpers/deny-syscalls), as a hardened container profile may: the
# run must exit 125 and say why, its command (which would write a file) must not have run,
# and its processes and its scratch (in a private $XDG_RUNTIME_DIR) must be gone soon after.
# In both views; the kernel view's checks skip, saying why, where namespaces are refused.
# usage: seize-refused.sh SBXTRACE DENY_SYSCALLS
set -u
sbx=$1 deny=$2
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { if eval "$1"; then ok "$2"; else nok "$2"; fi; }
# waits (bounded, 20 s) until the command succeeds
wait_for() { for _ in $(seq 200); do eval "$1" && return 0; sleep 0.1; done; return 1; }

command -v pgrep >/dev/null 2>&1 || { echo "1..0 # SKIP pgrep (procps) is not installed"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/seize-refused.XXXXXX") || exit 1
chmod 700 "$T"
mkdir -m 700 "$T/xdg" "$T/ws"
export XDG_RUNTIME_DIR=$T/xdg
trap 'pkill -9 -f -- "$T/ws" 2>/dev/null; rm -rf "$T"' EXIT

# the run directories of the runs of this test (sbxtrace-XXXXXX holding the list)
no_scratch() { ! compgen -G "$XDG_RUNTIME_DIR/sbxtrace-*" >/dev/null; }
# no process of ours names the workspace (the supervisor, its keeper, C: all sbxtrace)
no_process() { ! pgrep -f -- "$T/ws" >/dev/null; }

namespaces=yes
if ! command -v unshare >/dev/null 2>&1; then
	namespaces="unshare (util-linux) is not installed, to tell whether namespaces can be made"
elif ! unshare -U -m true 2>/dev/null && ! unshare -m true 2>/dev/null; then
	namespaces="unshare(CLONE_NEWUSER|CLONE_NEWNS) is refused here"
fi

echo "1..10"
for view in false true; do
	name=emulated
	[ "$view" = true ] && name="kernel view"
	if [ "$view" = true ] && [ "$namespaces" != yes ]; then
		for what in "control" "exit 125" "the reason" "the command did not run" \
			"nothing left"; do
			skip "$name: $what" "$namespaces"
		done
		continue
	fi
	rm -f "$T/ws/ran"
	# the positive control: the same run without the filter works, and the command runs
	"$sbx" run -q -w "$T/ws" -s "tracer.kernel_view=$view" standard -- \
		sh -c 'echo yes > /workspace/ran' >"$T/out" 2>&1
	rc=$?
	check '[ $rc -eq 0 ] && [ -f "$T/ws/ran" ]' "$name: control, without the filter (exit $rc)"
	rm -f "$T/ws/ran"
	wait_for no_scratch

	"$deny" ptrace -- "$sbx" run -q -w "$T/ws" -s "tracer.kernel_view=$view" standard -- \
		sh -c 'echo yes > /workspace/ran' >"$T/out" 2>&1
	rc=$?
	check '[ $rc -eq 125 ]' "$name: exit 125 (got $rc)"
	check 'grep -q "cannot trace the command" "$T/out"' \
		"$name: the reason: $(head -c 160 "$T/out" | tr '\n' ' ')"
	check '[ ! -e "$T/ws/ran" ]' "$name: the command did not run"
	check 'wait_for no_process && wait_for no_scratch' \
		"$name: nothing left: no process, no scratch"
done
exit $failed
