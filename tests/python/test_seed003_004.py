"""Seed 003 (the async SandboxManager and its result types) and seed 004 (async Sandbox
with start/execute/stop, async with, validate_workspace)."""
from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
import unittest
import zipfile
from pathlib import Path

from sbxtrace import (ExecutionResult, InvalidWorkspace, ListResult, ReadResult, Sandbox,
                      SandboxError, SandboxManager, SessionNotFound, WriteResult)
from sbxtrace.sandbox import validate_workspace
from support import ServerTest


class Seed003(ServerTest):
    def test_manager_flow(self):
        async def flow():
            mgr = SandboxManager(self.client)
            sid = await mgr.create_sandbox(language="python", sandbox_id="analysis-1")
            self.assertEqual(sid, "analysis-1")
            self.assertTrue(mgr.session_id(sid).startswith("sbx_"))
            w = await mgr.write_file(sandbox_id=sid, file_path="/workspace/config.json",
                                     content='{"key": "value"}')
            self.assertIsInstance(w, WriteResult)
            self.assertEqual((w.success, w.path, w.bytes), (True, "/workspace/config.json", 16))
            r = await mgr.execute_code(sandbox_id=sid, timeout=30, code=(
                "import json, sys\nprint(f'Python {sys.version_info.major}')\n"
                "open('output.txt', 'w').write(json.load(open('config.json'))['key'])"))
            self.assertIsInstance(r, ExecutionResult)
            self.assertTrue(r.success, r.stderr)
            self.assertEqual(r.stdout, "Python 3\n")
            rd = await mgr.read_file(sandbox_id=sid, file_path="/workspace/output.txt")
            self.assertIsInstance(rd, ReadResult)
            self.assertEqual(rd.content, "value")
            await mgr.execute_code(sid, "import os; os.makedirs('data', exist_ok=True)")
            ls = await mgr.list_files(sandbox_id=sid, path="/workspace")
            self.assertIsInstance(ls, ListResult)
            self.assertEqual(sorted(ls.files), ["config.json", "data/", "output.txt"])
            sh = await mgr.create_sandbox("shell")
            self.assertTrue(sh.startswith("sbx_"))
            r = await mgr.execute_code(sh, 'echo "Shell: $0"; ls -la /workspace | head -1')
            self.assertEqual(r.exit_code, 0, r.stderr)
            with self.assertRaisesRegex(NotImplementedError, "per-execution"):
                await mgr.execute_code(sid, "print(1)", max_memory_mb=1024)
            net = await mgr.create_sandbox("python", network_enabled=True,
                                           allowed_domains=["pypi.org:443"])
            info = mgr._get(net).sandbox_info()
            self.assertEqual(info["network_mode"], "allowlist")
            for s in (sid, sh, net):
                await mgr.destroy_sandbox(s)
            with self.assertRaises(SessionNotFound):
                await mgr.read_file(sid, "output.txt")
        asyncio.run(flow())

    def test_install_package(self):
        # code_install_package from a loopback PEP 503 index serving a wheel made here (no
        # internet): the server's config names the index, the package imports afterwards
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "/usr/local/bin/python3"
        if subprocess.run([py, "-m", "pip", "--version"], capture_output=True).returncode != 0:
            self.skipTest(f"no pip for {py} (apt-get install python3-pip)")
        root = Path(tempfile.mkdtemp(prefix="sbxtrace-py-index-"))
        self.addCleanup(shutil.rmtree, root, True)
        (root / "simple" / "sbxseed").mkdir(parents=True)
        whl = "sbxseed-1.0-py3-none-any.whl"
        files = {"sbxseed/__init__.py": "GREETING = 'hello from a wheel'\n",
                 "sbxseed-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: sbxseed\nVersion: 1.0\n",
                 "sbxseed-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
                                               "Root-Is-Purelib: true\nTag: py3-none-any\n"}
        record = "".join(
            f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b'=').decode()},{len(c)}\n"
            for n, c in files.items()) + "sbxseed-1.0.dist-info/RECORD,,\n"
        with zipfile.ZipFile(root / "simple" / "sbxseed" / whl, "w") as z:
            for n, c in {**files, "sbxseed-1.0.dist-info/RECORD": record}.items():
                z.writestr(n, c)
        (root / "simple" / "sbxseed" / "index.html").write_text(f'<a href="{whl}">{whl}</a>\n')
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        handler.log_message = lambda *a: None
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        self.addCleanup(httpd.server_close)
        self.addCleanup(httpd.shutdown)
        config = os.path.join(self.tmp, "mcp-packages.toml")
        with open(config, "w") as f:
            f.write(f'[packages]\npip_index = "http://127.0.0.1:{httpd.server_address[1]}/simple"\n')
        c = type(self.client)(data_dir=self.data_dir + "-packages", config=config)
        self.addCleanup(c.close)

        async def flow():
            mgr = SandboxManager(c)
            sid = await mgr.create_sandbox("python")
            r = await mgr.install_package(sid, "sbxseed==1.0", registry="pypi")
            self.assertTrue(r.success, r.stderr)
            self.assertEqual(r.meta["installed"][0]["name"], "sbxseed")
            self.assertEqual(r.meta["network_mode"], "none")
            e = await mgr.execute_code(sid, "import sbxseed\nprint(sbxseed.GREETING)")
            self.assertEqual(e.stdout, "hello from a wheel\n", e.stderr)
            await mgr.destroy_sandbox(sid)
        asyncio.run(flow())

    def test_fresh_by_default_stateful_on_request(self):
        async def flow(stateful):
            mgr = SandboxManager(self.client, stateful=stateful)
            sid = await mgr.create_sandbox("python")
            await mgr.execute_code(sid, "v = 41\nopen('f', 'w').write('kept')")
            r = await mgr.execute_code(sid, "print(open('f').read())\nv + 1")
            sh = await mgr.create_sandbox("shell")
            await mgr.execute_code(sh, "cd /tmp; S=1")
            r2 = await mgr.execute_code(sh, "pwd; echo ${S:-none}")
            for s in (sid, sh):
                await mgr.destroy_sandbox(s)
            return r, r2
        r, r2 = asyncio.run(flow(False))
        self.assertEqual(r.stdout, "kept\n")  # the files persist
        self.assertEqual(r.results, [])  # a script, not a cell
        self.assertEqual(r2.stdout, "/workspace\nnone\n")
        r, r2 = asyncio.run(flow(True))
        self.assertTrue(r.success, r.stderr)
        self.assertEqual((r.stdout, r.results), ("kept\n", [{"text/plain": "42"}]))
        self.assertIsNone(r.error)
        self.assertEqual(r2.stdout, "/tmp\n1\n")

    def test_concurrent_executions(self):
        async def flow():
            mgr = SandboxManager(self.client)
            ids = await asyncio.gather(*[mgr.create_sandbox("python") for _ in range(3)])
            rs = await asyncio.gather(*[mgr.execute_code(i, f"print({n} * 2)")
                                        for n, i in enumerate(ids)])
            self.assertEqual([r.stdout for r in rs], ["0\n", "2\n", "4\n"])
            await asyncio.gather(*[mgr.destroy_sandbox(i) for i in ids])
        asyncio.run(flow())

    def test_refused_network(self):
        # the default server config does not offer full network
        c = type(self.client)(data_dir=self.data_dir + "-plain")
        self.addCleanup(c.close)
        mgr = SandboxManager(c)
        with self.assertRaisesRegex(SandboxError, "code_create_sandbox"):
            mgr.create_sandbox_sync("python", network_enabled=True)


class Seed004(ServerTest):
    def test_async_with_and_workspace_copy(self):
        ws = Path(self.tmp) / "project"

        async def flow():
            async with Sandbox(workspace=ws, name="agent-1", client=self.client) as sandbox:
                self.assertTrue(ws.is_dir())  # start() created it
                result = await sandbox.execute("ls -la && echo made > made.txt")
                self.assertTrue(result.ok)
                self.assertEqual(result.returncode, 0)
                bad = await sandbox.execute("exit 3", timeout=5)
                self.assertFalse(bad.ok)
                self.assertEqual(bad.returncode, 3)
                slow = await sandbox.execute("sleep 10", timeout=1)
                self.assertTrue(slow.timed_out)
                self.assertFalse(slow.ok)
                # a fresh `sh -c` each time, as docker exec: cd and variables do not stay
                await sandbox.execute("cd /tmp; export K=1")
                here = await sandbox.execute("pwd; echo ${K:-none}")
                self.assertEqual(here.stdout, "/workspace\nnone\n")
        asyncio.run(flow())
        self.assertEqual((ws / "made.txt").read_text(), "made\n")

        async def again():
            sb = Sandbox(workspace=ws, name="agent-2", client=self.client)
            await sb.start()
            r = await sb.execute("cat made.txt")
            await sb.stop()
            return r
        self.assertEqual(asyncio.run(again()).stdout, "made\n")

    def test_validate_workspace(self):
        for bad in ["/", "/etc", "/usr/lib", "/var/lib/x", "/proc", "/root", "/boot"]:
            with self.assertRaises(InvalidWorkspace, msg=bad):
                validate_workspace(bad)
            with self.assertRaises(ValueError):
                Sandbox(workspace=bad, client=self.client)
        self.assertEqual(validate_workspace("/var/tmp/x"), Path("/var/tmp/x").resolve())
        ok = tempfile.mkdtemp(dir=self.tmp)
        self.assertEqual(validate_workspace(ok, workspace_root=self.tmp), Path(ok).resolve())
        with self.assertRaises(InvalidWorkspace):
            validate_workspace(ok, workspace_root=os.path.join(self.tmp, "elsewhere"))
        link = os.path.join(self.tmp, "to-etc")
        os.symlink("/etc", link)
        with self.assertRaises(InvalidWorkspace):
            validate_workspace(link)


if __name__ == "__main__":
    unittest.main()
