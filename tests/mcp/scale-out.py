#!/usr/bin/env python3
"""Scale-out on one machine, with real parts (issue 19 part 3, docs/deploy.md).

Starts SHARDS `sbxtrace mcp --http 127.0.0.1:0 --shard sN --http-stateless` servers, each on
its own data directory, and Debian's nginx in front of them on a loopback port (its config,
pid and logs in a temporary directory, run as the current user with -p/-c/-e). nginx maps
the Sbx-Session header's shard (sbx_SHARD_…) to that server and sends requests without one
to any of them (round robin). Then a driver:

  1. initializes one MCP session through nginx (whichever server answers), and uses its
     Mcp-Session-Id everywhere: the servers are stateless, so any of them takes it;
  2. opens SESSIONS sandbox sessions through nginx (round robin: spread over the shards);
  3. runs EXECS shell executions in each (`echo run-K >> log; wc -l < log`) from WORKERS
     threads, each sent with Sbx-Session; when half of them are done, kills (SIGKILL) one
     server: from then on its sessions fail with nginx's 502 "session lost" answer, and the
     others' executions go on without a single error;
  4. opens a few new sessions: they land on the live servers only;
  5. restarts the killed server on the same data directory and port: its sessions' files
     are back (each log holds the lines of its executions before the kill), and the sessions
     take executions again.

Prints the figures (throughput, p50/p99) and exits 0 when every check passed, 1 otherwise,
77 when a part is missing (the reason on stdout).

usage: scale-out.py --bin build/cli/sbxtrace [--shards 3] [--sessions 30] [--execs 5]
                    [--workers 6] [--no-kill] [--wrap 'build/tests/helpers/deny-syscalls containerd --']
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PROTOCOL = "2025-11-25"
LOST = "session lost"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `sbxtrace mcp --http` on its own data directory."""

    def __init__(self, binary, root, shard, config, wrap=()):
        self.binary, self.shard, self.config, self.wrap = binary, shard, config, list(wrap)
        self.data = os.path.join(root, "data-" + shard)
        self.log = os.path.join(root, "server-%s.log" % shard)
        self.port = 0
        self.proc = None

    def start(self):
        err = open(self.log, "a")
        self.proc = subprocess.Popen(
            self.wrap + [self.binary, "mcp", "--http", "127.0.0.1:%d" % self.port, "--shard", self.shard,
             "--http-stateless", "--data-dir", self.data, "--config", self.config],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        line = self.proc.stderr.readline().decode()
        if not line.startswith("listening on http://127.0.0.1:"):
            raise RuntimeError("server %s did not start: %r" % (self.shard, line))
        self.port = int(line.rsplit(":", 1)[1].split("/")[0])
        # the rest of its stderr to a file, from a thread (a full pipe would block it)
        threading.Thread(target=shutil.copyfileobj, args=(self.proc.stderr, err),
                         daemon=True).start()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def tree_pss_kib(self):
        """PSS of the server and everything under it (its sessions' contexts), KiB."""
        kids = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open("/proc/%s/stat" % pid) as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                    kids.setdefault(ppid, []).append(int(pid))
                except (OSError, ValueError, IndexError):
                    pass
        total, todo, n = 0, [self.proc.pid], 0
        while todo:
            pid = todo.pop()
            todo += kids.get(pid, [])
            n += 1
            try:
                with open("/proc/%d/smaps_rollup" % pid) as f:
                    for line in f:
                        if line.startswith("Pss:"):
                            total += int(line.split()[1])
            except OSError:
                pass
        return total, n

    def rss_kib(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0


NGINX_CONF = """\
# Generated by tests/mcp/scale-out.py: the router of docs/deploy.md on one machine.
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/nginx-error.log warn;
{user}
events {{ worker_connections 1024; }}

http {{
    access_log {root}/nginx-access.log;
    client_body_temp_path {root}/tmp/body;
    proxy_temp_path {root}/tmp/proxy;
    fastcgi_temp_path {root}/tmp/fastcgi;
    uwsgi_temp_path {root}/tmp/uwsgi;
    scgi_temp_path {root}/tmp/scgi;

    # the sandbox session's id: Sbx-Session, else the 2026 revision's Mcp-Param-Session-Id
    map $http_sbx_session $sbx_session {{
        ""      $http_mcp_param_session_id;
        default $http_sbx_session;
    }}
    # its shard: sbx_SHARD_ and 24 base62 (a plain sbx_ id, or none: any server)
    map $sbx_session $sbx_shard {{
        "~^sbx_(?<shard>[a-z0-9]{{1,16}})_[0-9A-Za-z]{{24}}$" $shard;
        default "";
    }}
    map $sbx_shard $sbx_upstream {{
{shard_map}
        default sbxtrace_any;
    }}

{upstreams}
    upstream sbxtrace_any {{
{any_servers}
        keepalive 32;
    }}

    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 8m;

        location = /mcp {{
            proxy_pass http://$sbx_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_buffering off;          # SSE answers of tools/call stream through
            proxy_read_timeout 3600s;     # long executions
            proxy_connect_timeout 2s;
            # a session's own server only: another server would only say "unknown session";
            # a request without a session may go to the next one when a server is down
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 0;
            error_page 502 503 504 = @shard_down;
        }}

        # the server of the session's shard is down or restarting: a JSON-RPC error that
        # says so (the client sees HTTP 502 and this body)
        location @shard_down {{
            default_type application/json;
            add_header Sbx-Shard $sbx_shard always;
            return 502 '{{"jsonrpc":"2.0","id":null,"error":{{"code":-32000,"message":"session lost: the server of shard \\'$sbx_shard\\' is unreachable (down or restarting); its sessions come back with it - retry later, or create a new session","data":{{"shard":"$sbx_shard"}}}}}}';
        }}
    }}
}}
"""


def nginx_conf(root, port, servers):
    ups = []
    for s in servers:
        # max_fails=0: a shard's only server is never marked down; its requests just fail
        ups.append("    upstream sbxtrace_%s {\n        server 127.0.0.1:%d max_fails=0;\n"
                   "        keepalive 8;\n    }" % (s.shard, s.port))
    return NGINX_CONF.format(
        root=root, port=port,
        user="user %s;" % __import__("pwd").getpwuid(os.getuid()).pw_name if os.getuid() == 0 else "",
        shard_map="\n".join("        %s sbxtrace_%s;" % (s.shard, s.shard) for s in servers),
        upstreams="\n".join(ups),
        any_servers="\n".join("        server 127.0.0.1:%d max_fails=1 fail_timeout=5s;" % s.port
                              for s in servers))


class Nginx:
    def __init__(self, root):
        self.root = root
        self.bin = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
        self.port = 0

    def start(self, servers):
        for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(self.root, "tmp", d), exist_ok=True)
        conf = os.path.join(self.root, "nginx.conf")
        for _ in range(5):
            self.port = free_port()
            with open(conf, "w") as f:
                f.write(nginx_conf(self.root, self.port, servers))
            r = subprocess.run([self.bin, "-p", self.root, "-c", conf, "-e",
                                os.path.join(self.root, "nginx-error.log")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode == 0 and self.wait_up():
                return None
            err = r.stdout + self.tail_log()
            if "Address already in use" not in err:
                return err.strip() or "nginx exited %d" % r.returncode
        return "nginx: no free port after 5 tries"

    def wait_up(self):
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return True
            except OSError:
                time.sleep(0.05)
        return False

    def tail_log(self):
        try:
            with open(os.path.join(self.root, "nginx-error.log")) as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def stop(self):
        try:
            with open(os.path.join(self.root, "nginx.pid")) as f:
                pid = int(f.read())
        except (OSError, ValueError):
            return
        try:
            os.kill(pid, signal.SIGQUIT)
            for _ in range(100):
                os.kill(pid, 0)
                time.sleep(0.05)
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Client:
    """A stateless MCP client over one keep-alive connection to nginx."""

    def __init__(self, port, mcp_session=None):
        self.port, self.mcp_session, self.n = port, mcp_session, 0
        self.conn = None

    def post(self, msg, sid=None):
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "MCP-Protocol-Version": PROTOCOL}
        if self.mcp_session:
            headers["Mcp-Session-Id"] = self.mcp_session
        if sid:
            headers["Sbx-Session"] = sid
        body = json.dumps(msg)
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            try:
                self.conn.request("POST", "/mcp", body, headers)
                r = self.conn.getresponse()
                data = r.read()
                return r.status, r.getheader("Mcp-Session-Id"), data
            except (http.client.HTTPException, ConnectionError):
                # nginx closed an idle keep-alive connection: once more on a new one
                self.conn.close()
                self.conn = None
                if attempt:
                    raise

    def tool(self, name, args, sid=None):
        self.n += 1
        status, _, data = self.post({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                                     "params": {"name": name, "arguments": args}}, sid)
        try:
            j = json.loads(data)
        except ValueError:
            j = None
        return status, j, data.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("SBXTRACE_BIN", "build/cli/sbxtrace"))
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--execs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--no-kill", action="store_true", help="no server is killed (a pure benchmark)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--wrap", default="", help="run each server under this command, e.g. "
                    "'tests/helpers/deny-syscalls containerd --' (a container's seccomp profile)")
    a = ap.parse_args()

    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        print("FAIL: %s is not an executable (build first, or --bin)" % binary)
        return 1
    ng_bin = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if not ng_bin:
        print("SKIP: nginx is not installed (Debian's: apt-get install nginx; .ci/run does)")
        return 77

    root = os.path.realpath(tempfile.mkdtemp(prefix="sbxtrace-scale-out-"))
    os.chmod(root, 0o755)
    config = os.path.join(root, "operator.toml")
    with open(config, "w") as f:
        f.write('[server]\nmax_sessions = 10000\nidle_timeout = "1h"\npolicies = ["standard"]\n')
    servers = [Server(binary, root, "s%d" % (i + 1), config, a.wrap.split()) for i in range(a.shards)]
    ng = Nginx(root)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("  FAILED: " + what)
        return cond

    try:
        for s in servers:
            s.start()
        rss0 = {s.shard: s.rss_kib() for s in servers}
        err = ng.start(servers)
        if err:
            print("SKIP: nginx cannot start here: %s" % err.replace("\n", " | ")[:600])
            return 77
        print("servers %s behind nginx 127.0.0.1:%d (%s)" % (
            ", ".join("%s=:%d" % (s.shard, s.port) for s in servers), ng.port,
            subprocess.run([ng.bin, "-v"], stderr=subprocess.PIPE, text=True).stderr.strip()))

        # 1. one MCP session, initialized wherever; used everywhere
        c0 = Client(ng.port)
        status, mcp_sid, data = c0.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "scale-out", "version": "1"}}})
        check(status == 200 and mcp_sid, "initialize through nginx: HTTP %d %s" % (status, data[:200]))
        c0.mcp_session = mcp_sid

        # 2. sessions, round robin
        t0 = time.monotonic()
        sessions, create_ms = [], []
        for i in range(a.sessions):
            t = time.monotonic()
            status, j, text = c0.tool("code_create_sandbox", {"policy": "standard"})
            create_ms.append((time.monotonic() - t) * 1000)
            if not check(status == 200 and j and "result" in j and not j["result"].get("isError"),
                         "create %d: HTTP %d %s" % (i, status, text[:300])):
                return 1
            sessions.append(j["result"]["structuredContent"]["session_id"])
        t_create = time.monotonic() - t0
        by_shard = {s.shard: [x for x in sessions if x.startswith("sbx_%s_" % s.shard)] for s in servers}
        print("%d sessions in %.2f s (%.0f/s, p50 %.1f ms); per shard: %s" % (
            len(sessions), t_create, len(sessions) / t_create, pct(create_ms, 50),
            ", ".join("%s %d" % (k, len(v)) for k, v in by_shard.items())))
        check(all(len(v) > 0 for v in by_shard.values()), "round robin reached every server")
        rss1 = {s.shard: s.rss_kib() for s in servers}

        # 3. executions, with a kill half-way
        victim = None if a.no_kill else servers[1]
        total = a.sessions * a.execs
        queue = [(sid, k) for k in range(a.execs) for sid in sessions]  # round by round
        lock = threading.Lock()
        results = {sid: [] for sid in sessions}   # [(k, ok, ms, message)]
        state = {"next": 0, "done": 0, "killed_at": None}

        def worker():
            cl = Client(ng.port, mcp_sid)
            while True:
                with lock:
                    if state["next"] >= len(queue):
                        return
                    sid, k = queue[state["next"]]
                    state["next"] += 1
                t = time.monotonic()
                status, j, text = cl.tool("code_execute", {
                    "session_id": sid, "language": "shell",
                    "code": "echo run-%d >> /workspace/log; wc -l < /workspace/log" % k}, sid)
                ms = (time.monotonic() - t) * 1000
                ok = (status == 200 and j is not None and "result" in j
                      and not j["result"].get("isError")
                      and j["result"]["structuredContent"].get("exit_code") == 0)
                msg = "" if ok else "HTTP %d %s" % (status, text[:300])
                with lock:
                    results[sid].append((k, ok, ms, msg))
                    state["done"] += 1
                    kill_now = victim and state["killed_at"] is None and state["done"] >= total // 2
                    if kill_now:
                        state["killed_at"] = state["done"]
                if kill_now:
                    victim.kill()
                    print("killed %s (SIGKILL) after %d of %d executions" % (victim.shard, state["done"], total))

        t0 = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(a.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        t_exec = time.monotonic() - t0

        ok_ms = [r[2] for v in results.values() for r in v if r[1]]
        n_ok = len(ok_ms)
        n_fail = total - n_ok
        print("%d executions (%d sessions x %d) from %d clients in %.2f s: %.0f executions/s, "
              "p50 %.1f ms, p99 %.1f ms; %d failed" % (
                  total, a.sessions, a.execs, a.workers, t_exec, n_ok / t_exec,
                  pct(ok_ms, 50), pct(ok_ms, 99), n_fail))

        # the others did not notice; the victim's sessions failed with "session lost"
        for s in servers:
            mine = by_shard[s.shard]
            fails = [r for sid in mine for r in results[sid] if not r[1]]
            if s is victim:
                check(len(fails) > 0, "%s: its sessions failed after the kill" % s.shard)
                check(all(LOST in r[3] and "HTTP 502" in r[3] for r in fails),
                      "%s: every failure says '%s' with 502 (first: %s)" % (
                          s.shard, LOST, fails[0][3] if fails else "-"))
                if fails:
                    print("  %s's sessions: %d executions failed, e.g. %s" % (s.shard, len(fails), fails[0][3][:200]))
            else:
                check(not fails, "%s: no failure (%s)" % (s.shard, fails[:1]))
                for sid in mine:
                    status, j, text = c0.tool("code_read_file", {"session_id": sid, "path": "log"}, sid)
                    lines = (j or {}).get("result", {}).get("structuredContent", {}).get("content", "")
                    check(lines.count("\n") == a.execs, "%s %s: log has %d lines, %d expected" % (
                        s.shard, sid, lines.count("\n"), a.execs))

        if victim:
            # 4. new sessions while it is down: only the live servers take them
            live = []
            for i in range(a.shards * 2):
                status, j, text = c0.tool("code_create_sandbox", {})
                if check(status == 200 and j and "result" in j, "create while %s is down: HTTP %d %s" % (
                        victim.shard, status, text[:200])):
                    live.append(j["result"]["structuredContent"]["session_id"])
            check(all(not x.startswith("sbx_%s_" % victim.shard) for x in live),
                  "no new session on the dead server")

            # 5. restart it on the same data directory and port
            victim.start()
            mine = by_shard[victim.shard]
            back = 0
            for sid in mine:
                oks = sum(1 for r in results[sid] if r[1])
                status, j, text = c0.tool("code_read_file", {"session_id": sid, "path": "log"}, sid)
                content = (j or {}).get("result", {}).get("structuredContent", {}).get("content")
                n = content.count("\n") if isinstance(content, str) else -1
                # an execution cut by the kill may have written its line without an answer
                if check(oks <= n <= oks + 1, "%s %s after restart: log has %d lines, %d answered executions" % (
                        victim.shard, sid, n, oks)):
                    back += 1
                status, j, text = c0.tool("code_execute", {"session_id": sid, "language": "shell",
                                                           "code": "wc -l < /workspace/log"}, sid)
                check(status == 200 and j and not j["result"].get("isError"),
                      "%s %s takes executions again: %s" % (victim.shard, sid, text[:200]))
            print("restarted %s on its data directory: %d of %d sessions back with their files" % (
                victim.shard, back, len(mine)))

        rss2 = {s.shard: s.rss_kib() for s in servers}
        trees = [s.tree_pss_kib() + (len(by_shard[s.shard]),) for s in servers if s is not victim]
        for (pss, nproc, nsess), s in zip(trees, [s for s in servers if s is not victim]):
            print("%s with %d sessions, each with a warm shell context: %d processes, PSS %.1f MiB "
                  "(%.2f MiB a session)" % (s.shard, nsess, nproc, pss / 1024, pss / 1024 / max(1, nsess)))
        per = [(rss1[s.shard] - rss0[s.shard]) / max(1, len(by_shard[s.shard])) for s in servers if s is not victim]
        print("server RSS: %s (KiB at start / after creating sessions / at the end)" % ", ".join(
            "%s %d/%d/%d" % (s.shard, rss0[s.shard], rss1[s.shard], rss2[s.shard]) for s in servers))
        if per:
            print("memory per idle session (no context yet): %.1f KiB" % statistics.mean(per))
        if failures:
            print("FAIL: %d check(s) failed" % len(failures))
            return 1
        print("PASS")
        return 0
    finally:
        ng.stop()
        for s in servers:
            s.stop()
        if a.keep or failures:
            print("kept %s (server and nginx logs)" % root)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
