"""The client itself: restart after the server is killed (the workspace survives), the
exceptions, sync and asyncio over one client, and a shared HTTP server with two
clients (and two tenants with tokens)."""
from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import unittest

from sbxtrace import (ApprovalRequired, BinaryNotFound, Client, ProtocolError, Sandbox,
                      SandboxError, SandboxManager, SandboxTimeout, ServerDied,
                      SessionNotFound, find_binary)
from sbxtrace._client import _unwrap, classify_tool_error
from support import ServerTest


class Restart(ServerTest):
    def test_killed_server_is_restarted_with_the_workspace(self):
        sb = Sandbox(client=self.client)
        self.addCleanup(sb.stop_sync)
        sb.execute_sync("echo precious > keep.txt")
        sid, pid = sb.session_id, self.client.server_pid
        os.kill(pid, signal.SIGKILL)
        deadline = time.time() + 5
        while self.client._transport.alive() and time.time() < deadline:
            time.sleep(0.05)
        r = sb.execute_sync("cat keep.txt")  # next call: a new server, same session
        self.assertEqual(r.stdout, "precious\n")
        self.assertNotEqual(self.client.server_pid, pid)
        self.assertEqual(sb.session_id, sid)
        self.assertGreaterEqual(self.client.restarts, 1)
        self.assertTrue(sb.session.sandbox_info()["processes_lost_at_restart"])

    def test_death_during_a_call(self):
        sb = Sandbox(client=self.client)
        self.addCleanup(sb.stop_sync)
        sb.execute_sync("echo x > f")
        t = threading.Timer(0.5, self.client.kill_server)
        t.start()
        with self.assertRaises(ServerDied):
            sb.execute_sync("sleep 5")
        t.join()
        self.assertEqual(sb.execute_sync("cat f").stdout, "x\n")

    def test_async_after_restart(self):
        async def flow():
            sb = Sandbox(client=self.client)
            await sb.start()
            await sb.execute("echo a > a")
            self.client.kill_server()
            r = await sb.execute("cat a")
            await sb.stop()
            return r
        self.assertEqual(asyncio.run(flow()).stdout, "a\n")


class Errors(ServerTest):
    def test_session_not_found_and_bad_path(self):
        sb = Sandbox(client=self.client, session_id="sbx_" + "A" * 24)
        with self.assertRaises(SessionNotFound) as cm:
            sb.execute_sync("true")
        self.assertIn("unknown session", str(cm.exception))
        sb = Sandbox(client=self.client)
        self.addCleanup(sb.stop_sync)
        with self.assertRaisesRegex(SandboxError, "no such file"):
            sb.session.read("missing.txt")
        with self.assertRaisesRegex(SandboxError, "wall-time limit"):
            sb.execute_sync("true", timeout=3600)

    def test_timeouts(self):
        sb = Sandbox(client=self.client)
        self.addCleanup(sb.stop_sync)
        r = sb.execute_sync("sleep 5", timeout=1)
        self.assertTrue(r.timed_out)
        with self.assertRaises(SandboxTimeout):
            r.raise_for_status()
        # the client's own deadline: the server does not answer in time
        with self.assertRaises(SandboxTimeout):
            self.client.call_tool("code_execute", {"session_id": sb.session_id,
                                                   "language": "shell", "code": "sleep 3"},
                                  timeout=0.5)
        self.assertEqual(sb.execute_sync("echo still").stdout, "still\n")

    def test_protocol_error(self):
        with self.assertRaises(ProtocolError) as cm:
            self.client.call_tool("no_such_tool", {})
        self.assertEqual(cm.exception.code, -32602)

    def test_approval_required_is_recognised(self):
        # The server asks for approval only once issue 17's rules exist; these are the two
        # shapes it answers with, as it will send them.
        e = classify_tool_error("code_execute", {"error": "approval_required",
                                                 "reason": "network-enabled execution"}, "")
        self.assertIsInstance(e, ApprovalRequired)
        self.assertEqual(e.reason, "network-enabled execution")
        with self.assertRaises(ApprovalRequired):
            _unwrap({"jsonrpc": "2.0", "id": 1, "error": {
                "code": -32001, "message": "approval_required: no approval channel"}},
                "tools/call")
        self.assertIsInstance(classify_tool_error("t", None, "unknown session 'x'"),
                              SessionNotFound)

    def test_binary_not_found(self):
        with self.assertRaises(BinaryNotFound):
            find_binary("/nonexistent/sbxtrace")
        old = os.environ.pop("SBXTRACE_BIN")
        path = os.environ.get("PATH", "")
        os.environ["PATH"] = "/nonexistent"
        try:
            with self.assertRaisesRegex(BinaryNotFound, "SBXTRACE_BIN"):
                Client(data_dir=self.data_dir)
        finally:
            os.environ["SBXTRACE_BIN"] = old
            os.environ["PATH"] = path

    def test_sync_and_async_on_one_client(self):
        sb = Sandbox(client=self.client)
        self.addCleanup(sb.stop_sync)
        sb.execute_sync("echo 1 > n")

        async def many():
            return await asyncio.gather(*[sb.execute(f"cat n; echo {i}") for i in range(4)])
        rs = asyncio.run(many())
        self.assertEqual([r.stdout for r in rs], [f"1\n{i}\n" for i in range(4)])


class Http(unittest.TestCase):
    """One shared ``sbxtrace mcp --http 127.0.0.1:0`` and two clients."""

    def start_server(self, *extra):
        tmp = tempfile.mkdtemp(prefix="sbxtrace-py-http-")
        proc = subprocess.Popen([os.environ["SBXTRACE_BIN"], "mcp", "--http", "127.0.0.1:0",
                                 "--data-dir", os.path.join(tmp, "sessions"), *extra],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (proc.terminate(), proc.wait(), proc.stderr.close()))
        line = proc.stderr.readline()
        m = re.search(r"listening on (\S+)", line)
        self.assertIsNotNone(m, line)
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        return m.group(1), tmp

    def test_two_clients_share_a_session(self):
        url, _ = self.start_server()
        a, b = Client(url=url), Client(url=url)
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        sa = Sandbox(client=a)
        sa.execute_sync("echo from-a > shared.txt")
        sb = Sandbox(client=b, session_id=sa.session_id)
        self.assertEqual(sb.execute_sync("cat shared.txt").stdout, "from-a\n")

        async def both():
            m = SandboxManager(b)
            sid = await m.create_sandbox("python")
            r1, r2 = await asyncio.gather(sa.execute("echo a"),
                                          m.execute_code(sid, "print('b')"))
            await m.destroy_sandbox(sid)
            return r1.stdout, r2.stdout
        self.assertEqual(asyncio.run(both()), ("a\n", "b\n"))
        self.assertIsNotNone(a._transport.mcp_session_id)
        self.assertNotEqual(a._transport.mcp_session_id, b._transport.mcp_session_id)
        sa.stop_sync()

    def test_tenants_with_tokens(self):
        tmp = tempfile.mkdtemp(prefix="sbxtrace-py-conf-")
        conf = os.path.join(tmp, "mcp.toml")
        with open(conf, "w") as f:
            f.write('[[tenant]]\nname = "alice"\ntoken = "alice-token-0123456789abcdef"\n'
                    '[[tenant]]\nname = "bob"\ntoken = "bob-token-0123456789abcdef01"\n')
        url, _ = self.start_server("--config", conf)
        alice = Client(url=url, token="alice-token-0123456789abcdef")
        bob = Client(url=url, token="bob-token-0123456789abcdef01")
        self.addCleanup(alice.close)
        self.addCleanup(bob.close)
        sa = Sandbox(client=alice)
        sa.execute_sync("echo secret > s")
        with self.assertRaises(SessionNotFound):
            Sandbox(client=bob, session_id=sa.session_id).execute_sync("cat s")
        with self.assertRaisesRegex(SandboxError, "401"):
            Client(url=url, token="wrong").tools()
        with self.assertRaisesRegex(SandboxError, "401"):
            Client(url=url).tools()
        sa.stop_sync()


if __name__ == "__main__":
    unittest.main()
