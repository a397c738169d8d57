"""Seed 001 (security levels, SandboxedRunner) and seed 002 (CodeSandbox,
ExecutionResult, get_code_sandbox configured by SANDBOX_* variables)."""
from __future__ import annotations

import os
import unittest
from unittest import mock

from sbxtrace import (CodeSandbox, ExecutionResult, Sandbox, SandboxedRunner, SandboxError,
                      SandboxResult, SandboxTimeout, SecurityLevel, get_code_sandbox)
from sbxtrace.code import CodeSandboxProtocol
from sbxtrace.runner import SandboxConfig
from support import ServerTest, have_node


class Seed001(ServerTest):
    def test_levels_map_to_presets_and_limits(self):
        for level, preset, wall, mem in [(SecurityLevel.PERMISSIVE, "python", 60, 1024),
                                         (SecurityLevel.STANDARD, "standard", 30, 512),
                                         (SecurityLevel.STRICT, "strict", 10, 256)]:
            with SandboxedRunner(level=level, client=self.client) as runner:
                r = runner.run("result = sum(data) if data else 0", data={"data": [1, 2]})
                self.assertIsInstance(r, SandboxResult)
                self.assertTrue(r.success, r.stderr)
                self.assertEqual(r.result, 3)
                self.assertEqual(runner.session.info["policy"], preset)
                self.assertEqual(runner.session.info["limits"]["wall_s"], wall)
                self.assertEqual(runner.session.info["limits"]["memory_mb"], mem)

    def test_execute_context_error_and_timeout(self):
        runner = SandboxedRunner(SandboxConfig(timeout_seconds=2), client=self.client)
        self.addCleanup(runner.cleanup)
        r = runner.execute("result = df['a'] * 2", {"df": {"a": 21}})
        self.assertEqual((r.success, r.result, r.error), (True, 42, None))
        self.assertGreater(r.execution_time_ms, 0)
        r = runner.execute("import nothing_here", {})
        self.assertFalse(r.success)
        self.assertIn("ModuleNotFoundError", r.error)
        r = runner.execute("import time; time.sleep(10)", {})
        self.assertFalse(r.success)
        self.assertTrue(r.timed_out)
        self.assertLess(r.execution_time_ms, 5000)

    def test_network_blocked(self):
        with SandboxedRunner(client=self.client) as runner:
            r = runner.execute("import socket\ns = socket.create_connection(('1.1.1.1', 80), "
                               "timeout=3)", {})
            self.assertFalse(r.success)


class Seed002(ServerTest):
    def test_protocol_and_result(self):
        sb = CodeSandbox(client=self.client)
        self.assertIsInstance(sb, CodeSandboxProtocol)
        r = sb.execute("print('hello')", "python", 10)
        self.assertIsInstance(r, ExecutionResult)
        self.assertEqual((r.stdout, r.exit_code, r.ok, r.returncode), ("hello\n", 0, True, 0))
        self.assertGreater(r.duration, 0)
        self.assertEqual(r.meta["runtime"], "sbxtrace")
        self.assertIn("truncated", r.meta)
        r = sb.execute("echo err >&2; exit 4", "shell")
        self.assertEqual((r.exit_code, r.stderr, r.ok), (4, "err\n", False))
        with self.assertRaises(SandboxError):
            r.raise_for_status()
        r = sb.execute("import time; time.sleep(5)", timeout=1)
        self.assertTrue(r.timed_out)
        with self.assertRaises(SandboxTimeout):
            r.raise_for_status()
        if have_node():
            self.assertEqual(sb.execute("console.log(6*7)", "javascript").stdout, "42\n")

    def test_one_shot_isolation(self):
        sb = CodeSandbox(client=self.client)
        sb.execute("open('/workspace/x', 'w').write('1')")
        r = sb.execute("import os; print(os.path.exists('/workspace/x'))")
        self.assertEqual(r.stdout, "False\n")
        sb.execute("x = 1")
        r = sb.execute("print(x)")  # each execute is fresh: no state carries over
        self.assertIn("NameError", r.stderr)
        self.assertEqual(r.results, [])

    def test_truncation_reported_in_meta(self):
        sb = Sandbox(client=self.client, limits={"output_kb": 1})
        self.addCleanup(sb.stop_sync)
        r = sb.execute_sync("head -c 100000 /dev/zero | tr '\\0' x")
        self.assertTrue(r.truncated)
        self.assertTrue(r.meta["truncated"])
        self.assertLessEqual(len(r.stdout), 2048)

    def test_environment_configuration(self):
        with mock.patch.dict(os.environ, {"SANDBOX_TYPE": "docker", "SANDBOX_TIMEOUT_SEC": "7",
                                          "SANDBOX_STORE_CODE": "always",
                                          "SBXTRACE_DATA_DIR": self.data_dir + "-env"}):
            sb = get_code_sandbox()
            self.assertEqual(sb.timeout, 7)
            r = sb.execute("print(1)")
            self.assertEqual(r.meta["store_code"], "always")
            self.assertEqual(r.meta["timeout_s"], 7)
            self.assertEqual(r.meta["requested_type"], "docker")
            sb.session.client.close()
        with mock.patch.dict(os.environ, {"SANDBOX_TYPE": "e2b"}):
            with self.assertRaisesRegex(ValueError, "sbxtrace.e2b"):
                get_code_sandbox()
        with mock.patch.dict(os.environ, {"SANDBOX_STORE_CODE": "sometimes"}):
            with self.assertRaises(ValueError):
                get_code_sandbox(client=self.client)


if __name__ == "__main__":
    unittest.main()
