"""The E2B-shaped facade: Sandbox.create, run_code -> Execution (logs, results, error) in
stateful contexts with live output, code contexts, commands.run in the foreground and in the
background (wait, kill, send_stdin, live callbacks), files, kill, context manager."""
from __future__ import annotations

import base64
import time
import unittest

from sbxtrace import SessionNotFound
from sbxtrace.e2b import (CommandExitException, CommandHandle, Context, Execution,
                          ExecutionError, OutputMessage, Result, Sandbox, TimeoutException)
from support import ServerTest, have_node

# A stand-in for matplotlib.pyplot (not installed here): the server's Python driver asks
# sys.modules["matplotlib.pyplot"] for its figures after each cell, as it does matplotlib's.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
                       "DwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
FAKE_PYPLOT = f"""
import sys, types
plt = types.ModuleType("matplotlib.pyplot")
class _Fig:
    def savefig(self, buf, format="png"):
        buf.write({PNG!r})
plt._figs = {{1: _Fig()}}
plt.get_fignums = lambda: sorted(plt._figs)
plt.figure = lambda num: plt._figs[num]
plt.close = lambda which: plt._figs.clear()
sys.modules["matplotlib.pyplot"] = plt
"""


class RunCode(ServerTest):
    def test_state_results_and_errors(self):
        with Sandbox.create(client=self.client) as sandbox:
            execution = sandbox.run_code("x = 21\nprint(x * 2)")
            self.assertIsInstance(execution, Execution)
            self.assertEqual(execution.logs.stdout, ["42\n"])
            self.assertIsNone(execution.error)
            self.assertEqual(execution.results, [])
            self.assertIsNone(execution.text)
            # the interpreter keeps its state: x is still there
            execution = sandbox.run_code("print(x)\nx * 2")
            self.assertIsNone(execution.error)
            self.assertEqual(execution.logs.stdout, ["21\n"])
            self.assertEqual(execution.text, "42")
            self.assertEqual(len(execution.results), 1)
            main = execution.results[0]
            self.assertIsInstance(main, Result)
            self.assertTrue(main.is_main_result)
            self.assertEqual((main.text, main.png, main.formats()), ("42", None, ["text"]))
            self.assertGreater(execution.execution_count, 1)
            # the error is the interpreter's own, not parsed from stderr
            execution = sandbox.run_code("def f():\n    raise KeyError('k')\nf()")
            self.assertIsInstance(execution.error, ExecutionError)
            self.assertEqual(execution.error.name, "KeyError")
            self.assertEqual(execution.error.value, "'k'")
            self.assertIn("Traceback", execution.error.traceback)
            self.assertIn("in f", execution.error.traceback)
            errors = []
            sandbox.run_code("undefined_name", on_error=errors.append)
            self.assertEqual(errors[0].name, "NameError")
            self.assertIn("'undefined_name' is not defined", errors[0].value)
            # a timeout interrupts the cell; the state survives it
            ex = sandbox.run_code("import time\ny = 1\ntime.sleep(10)", timeout=1)
            self.assertEqual(ex.error.name, "TimeoutError")
            self.assertIn("KeyboardInterrupt", ex.error.traceback)
            self.assertEqual(sandbox.run_code("x + y").text, "22")
            # bash and javascript contexts keep state too
            self.assertIsNone(sandbox.run_code("cd /tmp; V=shell", language="bash").error)
            self.assertEqual(sandbox.run_code("echo $V; pwd", language="bash").logs.stdout,
                             ["shell\n/tmp\n"])
            bad = sandbox.run_code("exit 3", language="bash")
            self.assertEqual(bad.error.name, "Error")
            self.assertIn("exit status 3", bad.error.value)
            if have_node():
                self.assertIsNone(sandbox.run_code("let n = 6", language="js").error)
                self.assertEqual(sandbox.run_code("n * 7", language="javascript").text, "42")
                js = sandbox.run_code("throw new TypeError('bad')", language="js")
                self.assertEqual((js.error.name, js.error.value), ("TypeError", "bad"))
            with self.assertRaises(ValueError):
                sandbox.run_code("1", language="cobol")

    def test_png_result(self):
        with Sandbox.create(client=self.client) as sandbox:
            seen = []
            ex = sandbox.run_code(FAKE_PYPLOT + "'done'", on_result=seen.append)
            self.assertIsNone(ex.error, ex.logs.stderr)
            self.assertEqual(ex.text, "'done'")
            figures = [r for r in ex.results if not r.is_main_result]
            self.assertEqual(len(figures), 1)
            self.assertEqual(base64.b64decode(figures[0].png), PNG)
            self.assertEqual(figures[0].text, "<Figure 1>")
            self.assertEqual(set(figures[0].formats()), {"text", "png"})
            self.assertEqual(len(seen), 2)

    def test_live_output(self):
        with Sandbox.create(client=self.client) as sandbox:
            seen = []
            start = time.monotonic()

            def out(m):
                seen.append((time.monotonic() - start, m))
            ex = sandbox.run_code(
                "import sys, time\nfor i in range(3):\n"
                "    print(i, flush=True); print('e', i, file=sys.stderr, flush=True)\n"
                "    time.sleep(0.6)\n", on_stdout=out, on_stderr=out)
            total = time.monotonic() - start
            self.assertIsNone(ex.error)
            # the first line came while the cell was still running
            self.assertLess(seen[0][0], total - 0.8, seen)
            self.assertIsInstance(seen[0][1], OutputMessage)
            stdout = "".join(m for _, m in seen if not m.error)
            stderr = "".join(m.line for _, m in seen if m.error)
            self.assertEqual((stdout, stderr), ("0\n1\n2\n", "e 0\ne 1\ne 2\n"))
            self.assertEqual("".join(ex.logs.stdout), "0\n1\n2\n")
            self.assertGreater(len(ex.logs.stdout), 1)  # chunks, as they came
            self.assertEqual("".join(ex.logs.stderr), "e 0\ne 1\ne 2\n")

    def test_envs(self):
        with Sandbox.create(client=self.client, envs={"G": "global"}) as sandbox:
            code = "import os\nprint(os.environ.get('G'), os.environ.get('A'))"
            self.assertEqual(sandbox.run_code(code, envs={"A": "a"}).logs.stdout,
                             ["global a\n"])
            self.assertEqual(sandbox.run_code(code).logs.stdout, ["global None\n"])
            self.assertEqual(sandbox.run_code(code, envs={"G": "over"}).logs.stdout,
                             ["over None\n"])
            self.assertEqual(sandbox.run_code(code).logs.stdout, ["global None\n"])
            sh = sandbox.run_code("echo $G-$A-$B", language="bash", envs={"A": "x y"})
            self.assertEqual(sh.logs.stdout, ["global-x y-\n"])
            self.assertEqual(sandbox.run_code("echo $G-$A", language="bash").logs.stdout,
                             ["global-\n"])
            if have_node():
                js = sandbox.run_code("process.env.A + process.env.G", language="js",
                                      envs={"A": "j"})
                self.assertEqual(js.text, "'jglobal'")
                self.assertEqual(sandbox.run_code("String(process.env.A)",
                                                  language="js").text, "'undefined'")
            self.assertEqual(sandbox.commands.run("echo $G $A", envs={"A": "c"}).stdout,
                             "global c\n")

    def test_code_contexts(self):
        with Sandbox.create(client=self.client) as sandbox:
            sandbox.run_code("x = 'default'")
            ctx = sandbox.create_code_context(cwd="/tmp")
            self.assertIsInstance(ctx, Context)
            self.assertEqual((ctx.language, ctx.cwd), ("python", "/tmp"))
            self.assertEqual(sandbox.run_code("x", context=ctx).error.name, "NameError")
            sandbox.run_code("x = 'mine'\nimport os", context=ctx)
            self.assertEqual(sandbox.run_code("x, os.getcwd()", context=ctx).text,
                             "('mine', '/tmp')")
            self.assertEqual(sandbox.run_code("x").text, "'default'")
            ids = {(c.id, c.language) for c in sandbox.list_code_contexts()}
            self.assertIn((ctx.id, "python"), ids)
            self.assertIn(("default", "python"), ids)
            sandbox.restart_code_context(ctx)
            self.assertEqual(sandbox.run_code("x", context=ctx).error.name, "NameError")
            self.assertEqual(sandbox.run_code("import os; os.getcwd()", context=ctx).text,
                             "'/tmp'")
            sandbox.remove_code_context(ctx)
            self.assertNotIn(ctx.id, {c.id for c in sandbox.list_code_contexts()})
            sandbox.restart_code_context()  # the default ones
            self.assertEqual(sandbox.run_code("x").error.name, "NameError")
            sh = sandbox.create_code_context(language="bash")
            sandbox.run_code("W=1", context=sh)
            self.assertEqual(sandbox.run_code("echo ${W:-none}; pwd", context=sh).logs.stdout,
                             ["1\n/workspace\n"])
            with self.assertRaisesRegex(ValueError, "either language or context"):
                sandbox.run_code("1", language="python", context=sh)
            with self.assertRaises(NotImplementedError):
                sandbox.set_timeout(10)


class Commands(ServerTest):
    def test_commands_and_files(self):
        sandbox = Sandbox(client=self.client)
        try:
            self.assertTrue(sandbox.sandbox_id.startswith("sbx_"))
            r = sandbox.commands.run("echo hi; echo warn >&2", envs={"A": "1"})
            self.assertEqual((r.stdout, r.stderr, r.exit_code), ("hi\n", "warn\n", 0))
            self.assertEqual(sandbox.commands.run("echo $A", envs={"A": "v"}).stdout, "v\n")
            # each command is a process of its own: no state between them
            sandbox.commands.run("cd /tmp; export Z=1")
            self.assertEqual(sandbox.commands.run("pwd; echo ${Z:-unset}").stdout,
                             "/workspace\nunset\n")
            with self.assertRaises(CommandExitException) as cm:
                sandbox.commands.run("echo oops >&2; exit 2")
            self.assertEqual(cm.exception.exit_code, 2)
            self.assertEqual(cm.exception.stderr, "oops\n")
            with self.assertRaises(TimeoutException):
                sandbox.commands.run("sleep 10", timeout=1)
            self.assertEqual(sandbox.commands.run("cat", stdin="fed").stdout, "fed")
            sandbox.files.write("/workspace/notes/a.txt", "alpha")
            sandbox.files.write("b.bin", b"\x00\xff")
            self.assertEqual(sandbox.files.read("notes/a.txt"), "alpha")
            self.assertEqual(sandbox.files.read("b.bin", format="bytes"), b"\x00\xff")
            names = sorted((e.name, e.type) for e in sandbox.files.list("/workspace"))
            self.assertEqual(names, [("b.bin", "file"), ("notes", "dir")])
            self.assertTrue(sandbox.files.exists("/workspace/notes/a.txt"))
            self.assertFalse(sandbox.files.exists("/workspace/nope"))
            self.assertEqual(sandbox.commands.run("cat a.txt", cwd="/workspace/notes").stdout,
                             "alpha")
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

    def test_live_foreground_callbacks(self):
        with Sandbox.create(client=self.client) as sandbox:
            seen = []
            start = time.monotonic()
            r = sandbox.commands.run(
                "for i in 1 2 3; do echo $i; echo e$i >&2; sleep 0.5; done",
                on_stdout=lambda s: seen.append((time.monotonic() - start, "out", s)),
                on_stderr=lambda s: seen.append((time.monotonic() - start, "err", s)))
            total = time.monotonic() - start
            self.assertEqual((r.stdout, r.stderr, r.exit_code), ("1\n2\n3\n", "e1\ne2\ne3\n", 0))
            self.assertLess(seen[0][0], total - 0.6, seen)
            self.assertEqual("".join(s for _, k, s in seen if k == "out"), "1\n2\n3\n")
            with self.assertRaises(CommandExitException):
                sandbox.commands.run("echo x; exit 4", on_stdout=lambda s: None)
            with self.assertRaises(TimeoutException):
                sandbox.commands.run("sleep 10", timeout=1, on_stdout=lambda s: None)

    def test_background(self):
        with Sandbox.create(client=self.client, envs={"G": "g"}) as sandbox:
            lines = []
            h = sandbox.commands.run("echo start $G; read line; echo got $line; "
                                     "echo bye >&2", background=True,
                                     on_stdout=lines.append)
            self.assertIsInstance(h, CommandHandle)
            self.assertIsNone(h.exit_code)
            deadline = time.monotonic() + 10
            while not lines and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(lines[0], "start g\n")  # before the process ended
            self.assertIn(h.pid, [p.pid for p in sandbox.commands.list() if p.running])
            h.send_stdin("hello\n")
            r = h.wait()
            self.assertEqual((r.stdout, r.stderr, r.exit_code),
                             ("start g\ngot hello\n", "bye\n", 0))
            self.assertEqual("".join(lines), "start g\ngot hello\n")
            self.assertEqual(h.exit_code, 0)

            # without callbacks: wait() follows it; iteration gives chunks
            h = sandbox.commands.run("sleep 0.3; echo late; exit 5", background=True)
            with self.assertRaises(CommandExitException) as cm:
                h.wait()
            self.assertEqual((cm.exception.exit_code, cm.exception.stdout), (5, "late\n"))
            h = sandbox.commands.run("echo one; sleep 0.3; echo two >&2", background=True)
            chunks = list(h)
            self.assertEqual("".join(o for o, _, _ in chunks if o), "one\n")
            self.assertEqual("".join(e for _, e, _ in chunks if e), "two\n")

            # kill, and a handle found again by its id
            h = sandbox.commands.run("sleep 60", background=True)
            again = sandbox.commands.connect(h.pid)
            self.assertTrue(h.kill())
            with self.assertRaises(CommandExitException):
                again.wait()
            self.assertNotEqual(again.exit_code, 0)
            self.assertFalse(sandbox.commands.kill("p999"))
            h = sandbox.commands.run("cat", background=True)
            sandbox.commands.send_stdin(h.pid, "via commands\n")
            h.close_stdin()
            self.assertEqual(h.wait().stdout, "via commands\n")
            h = sandbox.commands.run("sleep 10", background=True, timeout=1)
            with self.assertRaises(TimeoutException):
                h.wait()


if __name__ == "__main__":
    unittest.main()
