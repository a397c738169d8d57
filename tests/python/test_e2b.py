"""The E2B-shaped facade: Sandbox.create, run_code -> Execution (logs, results, error),
commands.run, files, kill, context manager, and what raises NotImplementedError."""
from __future__ import annotations

import unittest

from sbxtrace import SessionNotFound
from sbxtrace.e2b import (CommandExitException, Execution, ExecutionError, Sandbox,
                          TimeoutException)
from support import ServerTest


class E2B(ServerTest):
    def test_run_code(self):
        with Sandbox.create(client=self.client) as sandbox:
            seen = []
            execution = sandbox.run_code("x = 21\nprint(x * 2)", on_stdout=seen.append)
            self.assertIsInstance(execution, Execution)
            self.assertEqual(execution.logs.stdout, ["42\n"])
            self.assertEqual(seen, ["42\n"])
            self.assertIsNone(execution.error)
            self.assertEqual(execution.results, [])
            execution = sandbox.run_code("print(x)")  # stateless: x is gone
            self.assertIsInstance(execution.error, ExecutionError)
            self.assertEqual(execution.error.name, "NameError")
            self.assertIn("'x' is not defined", execution.error.value)
            self.assertIn("Traceback", execution.error.traceback)
            self.assertEqual(sandbox.run_code("echo sh", language="bash").logs.stdout,
                             ["sh\n"])
            ex = sandbox.run_code("import time; time.sleep(5)", timeout=1)
            self.assertEqual(ex.error.name, "TimeoutError")
            with self.assertRaisesRegex(NotImplementedError, "issue 17"):
                sandbox.run_code("1", context=object())
            with self.assertRaises(NotImplementedError):
                sandbox.create_code_context()

    def test_commands_and_files(self):
        sandbox = Sandbox(client=self.client)
        try:
            self.assertTrue(sandbox.sandbox_id.startswith("sbx_"))
            r = sandbox.commands.run("echo hi; echo warn >&2", envs={"A": "1"})
            self.assertEqual((r.stdout, r.stderr, r.exit_code), ("hi\n", "warn\n", 0))
            self.assertEqual(sandbox.commands.run("echo $A", envs={"A": "v"}).stdout, "v\n")
            with self.assertRaises(CommandExitException) as cm:
                sandbox.commands.run("echo oops >&2; exit 2")
            self.assertEqual(cm.exception.exit_code, 2)
            with self.assertRaises(TimeoutException):
                sandbox.commands.run("sleep 10", timeout=1)
            with self.assertRaisesRegex(NotImplementedError, "background"):
                sandbox.commands.run("sleep 100", background=True)
            sandbox.files.write("/workspace/notes/a.txt", "alpha")
            sandbox.files.write("b.bin", b"\x00\xff")
            self.assertEqual(sandbox.files.read("notes/a.txt"), "alpha")
            self.assertEqual(sandbox.files.read("b.bin", format="bytes"), b"\x00\xff")
            names = sorted((e.name, e.type) for e in sandbox.files.list("/workspace"))
            self.assertEqual(names, [("b.bin", "file"), ("notes", "dir")])
            self.assertTrue(sandbox.files.exists("/workspace/notes/a.txt"))
            self.assertFalse(sandbox.files.exists("/workspace/nope"))
            self.assertEqual(sandbox.commands.run("cat notes/a.txt", cwd="/workspace").stdout,
                             "alpha")
            again = Sandbox.connect(sandbox.sandbox_id, client=self.client)
            self.assertEqual(again.files.read("notes/a.txt"), "alpha")
            self.assertTrue(sandbox.is_running())
        finally:
            sandbox.kill()
        self.assertFalse(again.is_running())
        with self.assertRaises(SessionNotFound):
            again.files.read("notes/a.txt")


if __name__ == "__main__":
    unittest.main()
