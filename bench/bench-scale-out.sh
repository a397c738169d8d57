#!/bin/sh
# Scale-out at full size (docs/deploy.md): three sharded `sbxtrace mcp --http` servers behind
# Debian's nginx, 200 sessions x 10 executions from 16 clients, one server killed half-way
# and restarted; prints throughput and p50/p99 (tests/mcp/scale-out.py). --no-kill: the
# pure throughput of the three. A benchmark: its figures are only as quiet as the machine.
# usage: bench/bench-scale-out.sh [--bin build/cli/sbxtrace] [scale-out.py options]
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
exec "$here/../tests/mcp/scale-out.sh" --sessions 200 --execs 10 --workers 16 "$@"
