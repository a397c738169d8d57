"""Seed 000's shape: Sandbox.run with bind mounts and network isolation, SandboxResult,
NetworkMode, get_sandbox, the private-data ratchet through add_private_dataset, objects in
and out of Python code (JSON, pickle when asked), failure recovery."""
from __future__ import annotations

import asyncio
import os
import tempfile
import unittest
from pathlib import Path

import sbxtrace
from sbxtrace import (BindMount, NetworkMode, Sandbox, SandboxResult, add_private_dataset,
                      get_sandbox)
from sbxtrace.sandbox import get_network_mode
from support import ServerTest


class Seed000(ServerTest):
    def sandbox(self, **kw):
        sb = Sandbox(client=self.client, **kw)
        self.addCleanup(sb.stop_sync)
        return sb

    def test_run_argv_with_cwd(self):
        sb = self.sandbox()
        r = asyncio.run(sb.run(["sh", "-c", "mkdir -p sub && cd sub && pwd"],
                               bind_mounts=[], isolate_network=True, isolate_pid=True,
                               cwd="/workspace", timeout=10))
        self.assertIsInstance(r, SandboxResult)
        self.assertEqual((r.exit_code, r.stdout, r.timed_out), (0, "/workspace/sub\n", False))
        r = sb.run_sync("ls", cwd="/workspace/sub")
        self.assertEqual(r.exit_code, 0)
        # each run is a process of its own: a cwd or a variable does not leak into the next
        sb.run_sync("export LEAK=1", cwd="/workspace/sub")
        r = sb.run_sync("pwd; echo ${LEAK:-none}")
        self.assertEqual(r.stdout, "/workspace\nnone\n")

    def test_timeout_is_a_result(self):
        r = self.sandbox().run_sync(["sleep", "20"], timeout=1)
        self.assertTrue(r.timed_out)
        self.assertNotEqual(r.exit_code, 0)
        self.assertFalse(r.success)

    def test_bind_mounts_under_workspace(self):
        host = Path(tempfile.mkdtemp(dir=self.tmp))
        (host / "in.csv").write_text("a,b\n1,2\n")
        out = Path(tempfile.mkdtemp(dir=self.tmp))
        sb = self.sandbox()
        r = sb.run_sync("cat /workspace/data/in.csv > /workspace/out/copy.csv && "
                        "echo done > /workspace/out/flag",
                        bind_mounts=[BindMount(host, "/workspace/data", readonly=True),
                                     BindMount(out, "/workspace/out")])
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual((out / "copy.csv").read_text(), "a,b\n1,2\n")
        self.assertEqual((out / "flag").read_text(), "done\n")

    def test_bind_mount_elsewhere_is_not_implemented(self):
        with self.assertRaisesRegex(NotImplementedError, "bind mounts"):
            self.sandbox().run_sync("true", bind_mounts=[BindMount(self.tmp, self.tmp)])

    def test_objects_in_and_out_json_and_pickle(self):
        sb = self.sandbox(policy="python")
        r = sb.run_python_sync("result = {'total': sum(rows), 'n': len(rows)}",
                               {"rows": [1, 2, 3]})
        self.assertTrue(r.success, r.stderr)
        self.assertEqual(r.result, {"total": 6, "n": 3})
        r = sb.run_python_sync("print('noise'); result = (inputs[0], set(inputs[1]))",
                               (7, [1, 1, 2]), serializer="pickle")
        self.assertEqual(r.result, (7, {1, 2}))
        self.assertEqual(r.stdout.strip(), "noise")
        r = asyncio.run(sb.run_python("raise ValueError('bad')"))
        self.assertFalse(r.success)
        self.assertIn("ValueError: bad", r.error)

    def test_network_modes_and_ratchet(self):
        sb = self.sandbox(network=NetworkMode.FULL)
        self.assertIs(sb.get_network_mode_sync(), NetworkMode.FULL)
        with self.assertRaisesRegex(NotImplementedError, "per-call network"):
            sb.run_sync("true", isolate_network=True)
        self.assertIs(add_private_dataset("patients", "internal", sandbox=sb), NetworkMode.FULL)
        self.assertIs(add_private_dataset("ledger", "confidential", sandbox=sb),
                      NetworkMode.PROXIED)
        self.assertIs(add_private_dataset("keys", "secret", sandbox=sb), NetworkMode.NONE)
        # one-way: a lower level does not loosen it
        self.assertIs(add_private_dataset("memo", "internal", sandbox=sb), NetworkMode.NONE)
        self.assertIs(get_network_mode(sb), NetworkMode.NONE)
        self.assertTrue(sb.private_data.session_has_private_data())
        r = asyncio.run(sb.execute("echo after"))
        self.assertTrue(any("[SYSTEM] Network access has been restricted" in n
                            for n in r.notices), r.notices)
        self.assertEqual(r.network_mode, "none")
        r = sb.run_sync("true", isolate_network=True)  # now allowed: no network left
        self.assertEqual(r.exit_code, 0)

    def test_get_sandbox_default_and_new(self):
        env = {"SBXTRACE_DATA_DIR": self.data_dir + "-default"}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            sbxtrace.sandbox._default = None
            a, b = get_sandbox(), get_sandbox()
            self.assertIs(a, b)
            self.assertIsInstance(a, Sandbox)
            self.assertEqual(a.run_sync("echo ok").stdout, "ok\n")
            c = get_sandbox(client=self.client)
            self.assertIsNot(c, a)
            self.assertIs(add_private_dataset("x", "secret"), NetworkMode.NONE)
            a.stop_sync()
            a.client.close()
        finally:
            sbxtrace.sandbox._default = None
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_failure_recovery_after_a_crash(self):
        sb = self.sandbox()
        sb.run_sync("echo kept > state.txt")
        r = sb.run_sync("kill -SEGV $$")  # the sandboxed process dies
        self.assertNotEqual(r.exit_code, 0)
        self.assertEqual(sb.run_sync("cat state.txt").stdout, "kept\n")


if __name__ == "__main__":
    unittest.main()
