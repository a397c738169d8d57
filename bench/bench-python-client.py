#!/usr/bin/python3
"""How long a Python caller waits for `echo hi`: through the sbxtrace client (one-shot
code_execute, a fresh process in a session, the session's stateful shell context, E2B's
run_code and a live-output run_code), next to subprocess.run(["sbxtrace", "run", ...]).

    SBXTRACE_BIN=build/cli/sbxtrace PYTHONPATH=python bench/bench-python-client.py [N]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from sbxtrace import Client, CodeSandbox, Sandbox, find_binary  # noqa: E402
from sbxtrace.e2b import Sandbox as E2BSandbox  # noqa: E402


def measure(fn, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9) - 1 if n >= 10 else -1]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    binary = find_binary()
    tmp = tempfile.mkdtemp(prefix="sbxtrace-bench-")
    ws = os.path.join(tmp, "ws")
    os.mkdir(ws)

    t = time.perf_counter()
    client = Client(binary=binary, data_dir=os.path.join(tmp, "sessions"))
    one = CodeSandbox(client=client)
    r = one.execute("echo hi", "shell")
    first = (time.perf_counter() - t) * 1000
    assert r.stdout == "hi\n", r

    def run_cli():
        p = subprocess.run([binary, "run", "-q", "-w", ws, "standard", "--", "sh", "-c",
                            "echo hi"], capture_output=True, text=True)
        assert p.stdout == "hi\n", p

    def one_shot():
        assert one.execute("echo hi", "shell").stdout == "hi\n"

    sb = Sandbox(client=client)
    sb.execute_sync("true")

    def session():
        assert sb.execute_sync("echo hi").stdout == "hi\n"

    sb.session.execute("true", "shell", fresh=False)

    def context():
        assert sb.session.execute("echo hi", "shell", fresh=False).stdout == "hi\n"

    e2b = E2BSandbox(client=client)
    e2b.run_code("1")

    def run_code():
        assert e2b.run_code("print('hi')").logs.stdout == ["hi\n"]

    def run_code_live():
        seen = []
        e2b.run_code("print('hi')", on_stdout=seen.append)
        assert "".join(seen) == "hi\n", seen

    rows = [("subprocess.run(sbxtrace run standard -- sh -c 'echo hi')", measure(run_cli, n)),
            ("client one-shot: CodeSandbox.execute('echo hi', 'shell')", measure(one_shot, n)),
            ("client session, fresh: Sandbox.execute_sync('echo hi')", measure(session, n)),
            ("client session, shell context: execute(fresh=False)", measure(context, n)),
            ("e2b run_code(\"print('hi')\") (python context)", measure(run_code, n)),
            ("e2b run_code with on_stdout (progressToken)", measure(run_code_live, n))]
    print(f"echo hi, {n} runs each, ms (median, p90); sbxtrace {binary}")
    for name, (med, p90) in rows:
        print(f"  {name:60s} {med:7.1f} {p90:7.1f}")
    print(f"  {'first call (spawn sbxtrace mcp + initialize + one-shot)':60s} {first:7.1f}")
    sb.stop_sync()
    e2b.kill()
    client.close()


if __name__ == "__main__":
    main()
