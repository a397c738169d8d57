#!/bin/sh
# Scale-out on one machine with real parts (docs/deploy.md, issue 19 part 3): three
# `sbxtrace mcp --http --shard sN --http-stateless` servers behind Debian's nginx, which routes
# on the Sbx-Session header's shard; 30 sessions x 5 executions, one server killed half-way
# (its sessions: 502 "session lost"; the others: no error), then restarted on its data
# directory (its sessions' files are back). tests/mcp/scale-out.py does the work and prints
# the figures; bench/bench-scale-out.sh runs it at full size.
# Exit 77 (skipped) with the reason when nginx or python3 is missing or nginx cannot start.
# usage: scale-out.sh [scale-out.py options: --wrap CMD, --sessions N …]   (SBXTRACE_BIN)
set -u
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
bin=${SBXTRACE_BIN:-$here/../../build/cli/sbxtrace}
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 is not installed"
	exit 77
fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
	echo "SKIP: nginx is not installed (Debian's: apt-get install nginx; .ci/run installs it)"
	exit 77
fi
exec python3 "$here/scale-out.py" --bin "$bin" "$@"
