#!/bin/sh
# Starts an MCP server over HTTP on a free loopback port, runs the official conformance
# suite against it (run-conformance.sh), and stops it.
#   conformance-against.sh BASELINE|- SERVER [ARGS…]
# SERVER ARGS… must serve HTTP and print "listening on URL" on stderr: the fixture server
# (fixture-server 127.0.0.1:0) or `sbxtrace mcp --http 127.0.0.1:0 --data-dir DIR`.
# MCP_CONFORMANCE_SCENARIOS limits the run (see run-conformance.sh). Exit: as run-conformance.sh.
set -u
MCP_TEST_DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
baseline=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conf-srv.XXXXXX")
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
# SBX_TMP_DATA_DIR in the server's arguments: a data directory of our own temp dir (session
# directories are 0700: never leave them in the build tree)
set -- $(for a in "$@"; do [ "$a" = SBX_TMP_DATA_DIR ] && echo "$tmp/data" || echo "$a"; done)
"$@" 2>"$tmp/stderr" &
pid=$!
url=
for _ in $(seq 1 100); do
	url=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$tmp/stderr" | head -n1)
	[ -n "$url" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "conformance-against: the server did not start:"
	cat "$tmp/stderr"
	exit 1
fi
echo "conformance-against: $* at $url"
if [ "$baseline" = - ]; then
	"$MCP_TEST_DIR/run-conformance.sh" "$url"
else
	"$MCP_TEST_DIR/run-conformance.sh" "$url" "$baseline"
fi
