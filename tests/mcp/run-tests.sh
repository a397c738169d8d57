#!/bin/sh
# Run the SDK-driven MCP tests (every *.test.mjs here: tools, security, approval) under node --test.
# Exit 77 (meson's "skipped") with a reason when the npm dependencies are not
# installed (see install.sh) or node is missing; otherwise node's exit code.
# usage: run-tests.sh [node --test options...]   (SBXTRACE_BIN: binary under test)
set -u
MCP_TEST_DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
. "$MCP_TEST_DIR/env.sh"

if [ ! -f "$MCP_STAMP" ] || [ ! -d "$MCP_TEST_DIR/node_modules/@modelcontextprotocol/sdk" ]; then
	echo "SKIP: MCP test dependencies are not installed (run tests/mcp/install.sh; it needs npm and the npm registry)"
	exit 77
fi
if [ "$(cat "$MCP_STAMP")" != "$(sha256sum "$MCP_TEST_DIR/package-lock.json" | cut -d' ' -f1)" ]; then
	echo "SKIP: tests/mcp/node_modules does not match package-lock.json (rerun tests/mcp/install.sh)"
	exit 77
fi
# Node 20 from the system runs the tests; the pinned Node 22 also works.
node=${MCP_NODE:-$(command -v node || true)}
[ -n "$node" ] || node=$MCP_NODE22
if [ ! -x "$SBXTRACE_BIN" ]; then
	echo "FAIL: $SBXTRACE_BIN is not an executable (build first or set SBXTRACE_BIN)"
	exit 1
fi
cd "$MCP_TEST_DIR" || exit 1
exec "$node" --test --test-concurrency=1 "$@" ./*.test.mjs
