#!/usr/bin/env python3
"""Inside the container (tests/container/docker.sh): `sbxtrace mcp` over stdio, as an MCP
host spawns it — initialize, then code_create_sandbox and code_execute (python print) in
that session, then code_destroy_sandbox. Prints what it got; exit 0 when the execution
printed what the code prints, 1 otherwise.

usage: mcp-stdio.py DATA_DIR
"""
import json
import subprocess
import sys

proc = subprocess.Popen(["sbxtrace", "mcp", "--data-dir", sys.argv[1]],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
next_id = 0


def call(method, params=None, notify=False):
    global next_id
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    if not notify:
        next_id += 1
        msg["id"] = next_id
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    if notify:
        return None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"sbxtrace mcp closed stdout (exit {proc.wait()}) before answering {method}")
        reply = json.loads(line)
        if reply.get("id") == msg["id"]:
            if "error" in reply:
                raise SystemExit(f"{method}: error {reply['error']}")
            return reply["result"]
        # a notification (logging, progress): not ours


def tool(name, **args):
    res = call("tools/call", {"name": name, "arguments": args})
    if res.get("isError"):
        raise SystemExit(f"{name}: isError: {res.get('content')}")
    return res.get("structuredContent") or json.loads(res["content"][0]["text"])


init = call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "container-test", "version": "1"}})
print(f"server {init['serverInfo']['name']} {init['serverInfo'].get('version', '')}, "
      f"protocol {init['protocolVersion']}")
call("notifications/initialized", notify=True)
sess = tool("code_create_sandbox")
sid = sess["session_id"]
print(f"session {sid}: policy {sess.get('policy')}, network {sess.get('network_mode')}")
ex = tool("code_execute", session_id=sid, language="python",
          code="import sys\nprint('hello from', sys.version_info[:2], 6 * 7)")
print(f"code_execute: exit {ex.get('exit_code')}, stdout {ex.get('stdout')!r}, "
      f"stderr {ex.get('stderr', '')[-300:]!r}")
tool("code_destroy_sandbox", session_id=sid)
proc.stdin.close()
rc = proc.wait(timeout=30)
print(f"sbxtrace mcp exited {rc} at end of input")
good = ex.get("exit_code") == 0 and ex.get("stdout", "").endswith("42\n") and rc == 0
sys.exit(0 if good else 1)
