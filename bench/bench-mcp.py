#!/usr/bin/env python3
"""bench-mcp: what the agent layer costs (docs/performance.md, "The agent layer").

Prints, in one run:
  - a one-shot code_execute of `echo hi` through MCP stdio next to `sbxtrace run --json`
    of the same command (the difference is what the MCP layer adds);
  - p50/p99 of a shell code_execute inside a live session;
  - sessions created per second;
  - the server's resident memory per idle session (RSS growth over N idle sessions);
  - S sessions x E executes from C concurrent HTTP clients, with the error count.

Usage: bench/bench-mcp.py [--bin build/cli/sbxtrace] [--sessions 100] [--execs 10]
A benchmark, not a test: it asserts nothing and its figures are only as quiet as the machine.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Stdio:
    def __init__(self, binary, data_dir, config):
        self.p = subprocess.Popen([binary, "mcp", "--data-dir", data_dir, "--config", config],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.n = 0
        self.call_raw("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "bench-mcp", "version": "1"}})

    def call_raw(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def tool(self, name, args):
        r = self.call_raw("tools/call", {"name": name, "arguments": args})
        if "error" in r:
            raise RuntimeError(r["error"])
        if name == "code_create_sandbox" and r["result"].get("isError"):
            raise RuntimeError(r["result"]["content"][0]["text"])
        return r["result"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Http:
    def __init__(self, url):
        u = url[len("http://"):]
        hostport, _ = u.split("/", 1)
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.sid = None
        self.n = 0
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
        self.post("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "bench-mcp", "version": "1"}})

    def post(self, method, params):
        self.n += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        # JSON answers: with text/event-stream listed, a tools/call is answered as SSE
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        self.conn.request("POST", "/mcp", body, h)
        r = self.conn.getresponse()
        data = r.read()
        self.sid = r.getheader("Mcp-Session-Id") or self.sid
        return json.loads(data)

    def tool(self, name, args):
        r = self.post("tools/call", {"name": name, "arguments": args})
        if "error" in r:
            raise RuntimeError(r["error"])
        return r["result"]


def timed(f, k):
    xs = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        xs.append((time.perf_counter() - t) * 1000)
    return xs


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--bin", default=os.path.join(here, "..", "build", "cli", "sbxtrace"))
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--execs", type=int, default=10)
    ap.add_argument("--clients", type=int, default=8)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="bench-mcp.")
    try:
        ws = os.path.join(root, "ws")
        os.mkdir(ws)
        config = os.path.join(root, "mcp.toml")
        with open(config, "w") as f:
            f.write("[server]\nmax_sessions = 100000\n")
        s = Stdio(a.bin, os.path.join(root, "data"), config)
        run = timed(lambda: subprocess.run([a.bin, "run", "--json", "-q", "-w", ws, "standard",
                                            "--", "/bin/sh", "-c", "echo hi"],
                                           capture_output=True, check=False), a.rounds)
        one = timed(lambda: s.tool("code_execute", {"language": "shell", "code": "echo hi"}),
                    a.rounds)
        sid = s.tool("code_create_sandbox", {})["structuredContent"]["session_id"]
        ins = timed(lambda: s.tool("code_execute", {"session_id": sid, "language": "shell",
                                                      "code": "echo hi"}), max(a.rounds, 100))
        fresh = timed(lambda: s.tool("code_execute", {"session_id": sid, "language": "shell",
                                                        "code": "echo hi", "fresh": True}),
                      a.rounds)
        s.tool("code_execute", {"session_id": sid, "language": "python", "code": "x = 0"})
        py = timed(lambda: s.tool("code_execute", {"session_id": sid, "language": "python",
                                                     "code": "x += 1"}), max(a.rounds, 100))
        s.tool("code_execute", {"session_id": sid, "language": "javascript", "code": "var x = 0"})
        js = timed(lambda: s.tool("code_execute", {"session_id": sid, "language": "javascript",
                                                     "code": "x += 1"}), max(a.rounds, 100))
        first = timed(lambda: (s.tool("code_reset_context", {"session_id": sid,
                                                              "language": "python"}),
                               s.tool("code_execute", {"session_id": sid, "language": "python",
                                                       "code": "1"})), 10)
        pyc = timed(lambda: subprocess.run([a.bin, "run", "-q", "-w", ws, "python", "--",
                                            "python3", "-c", "x = 1"], capture_output=True),
                    a.rounds)
        before = rss_kib(s.p.pid)
        created = timed(lambda: s.tool("code_create_sandbox", {}), 200)
        after = rss_kib(s.p.pid)
        print(f"sbxtrace run --json sh -c 'echo hi'     median {statistics.median(run):7.2f} ms")
        print(f"code_execute one-shot over stdio       median {statistics.median(one):7.2f} ms"
              f"  (+{statistics.median(one) - statistics.median(run):.2f} ms; target <= +1)")
        print(f"code_execute in a session (shell)      p50 {pct(ins, 50):7.2f} ms  "
              f"p99 {pct(ins, 99):7.2f} ms  (target p50 <= 3)")
        print(f"  the same with fresh: true            p50 {pct(fresh, 50):7.2f} ms")
        print(f"x += 1 in a warm python context        p50 {pct(py, 50):7.2f} ms  "
              f"p99 {pct(py, 99):7.2f} ms  (target p50 <= 2)")
        print(f"x += 1 in a warm javascript context    p50 {pct(js, 50):7.2f} ms  "
              f"p99 {pct(js, 99):7.2f} ms")
        print(f"first call of a new python context     median {statistics.median(first):7.2f} ms")
        print(f"sbxtrace run python -- python3 -c      median {statistics.median(pyc):7.2f} ms")
        print(f"code_create_sandbox                    median {statistics.median(created):7.2f} ms"
              f"  ({1000 / statistics.median(created):.0f} sessions/s)")
        print(f"server memory per idle session         {(after - before) / 200:7.1f} KiB"
              f"  (RSS {before} -> {after} KiB over 200 sessions; target <= 1024)")
        s.close()

        # S sessions x E executes from C concurrent HTTP clients
        p = subprocess.Popen([a.bin, "mcp", "--http", "127.0.0.1:0", "--data-dir",
                              os.path.join(root, "http"), "--config", config],
                             stderr=subprocess.PIPE, text=True)
        url = p.stderr.readline().split()[-1]
        errors, lat, lock = [0], [], threading.Lock()
        per = [list(range(i, a.sessions, a.clients)) for i in range(a.clients)]

        def client(ids):
            c = Http(url)
            for _ in ids:
                try:
                    sid = c.tool("code_create_sandbox", {})["structuredContent"]["session_id"]
                    for k in range(a.execs):
                        t = time.perf_counter()
                        r = c.tool("code_execute", {"session_id": sid, "language": "shell",
                                                    "code": f"echo {k}"})
                        d = (time.perf_counter() - t) * 1000
                        ok = r["structuredContent"]["stdout"] == f"{k}\n" and not r["isError"]
                        with lock:
                            lat.append(d)
                            errors[0] += 0 if ok else 1
                    c.tool("code_destroy_sandbox", {"session_id": sid})
                except Exception as e:  # counted, not hidden
                    with lock:
                        errors[0] += 1
                    print("error:", e, file=sys.stderr)

        t0 = time.perf_counter()
        th = [threading.Thread(target=client, args=(ids,)) for ids in per]
        for t in th:
            t.start()
        for t in th:
            t.join()
        wall = time.perf_counter() - t0
        p.terminate()
        p.wait()
        n = a.sessions * a.execs
        print(f"{a.sessions} sessions x {a.execs} executes, {a.clients} HTTP clients: "
              f"{wall:.1f} s, {n / wall:.0f} executes/s, p50 {pct(lat, 50):.1f} ms, "
              f"p99 {pct(lat, 99):.1f} ms, errors {errors[0]}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
