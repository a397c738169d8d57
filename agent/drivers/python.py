# sbxtrace's Python context driver (docs/agents.md, "Stateful contexts"). It runs inside the
# session's sandbox, under its policy and budgets, and keeps one namespace between calls.
#
# Protocol with the server, on the driver's inherited stdin and stdout:
#   request, one line:   "<id> <base64 of the code>\n"
#   reply, on stdout:    "\x1eSBX" + JSON + "\x1f"  (everything else on stdout is the code's)
#     {"t": "ready"} once, then per request
#     {"t": "done", "id": N, "exit_code": 0|1|N, "results": [{mime: data}], "error": {...}}
# The code's stdout and stderr are the driver's own fds 1 and 2 (subprocesses too); its stdin
# is /dev/null. The code can write a reply frame itself: it can only lie about its own result.
import ast
import base64
import importlib
import io
import json
import linecache
import os
import signal
import sys
import traceback

os.environ.setdefault("MPLBACKEND", "Agg")
# Debian's matplotlib reads /etc/matplotlibrc, which a sandbox does not show: give it one
if "MATPLOTLIBRC" not in os.environ and not os.path.exists("/etc/matplotlibrc"):
    try:
        _rc = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sbxtrace-matplotlibrc")
        with open(_rc, "w") as _f:
            _f.write("backend: Agg\n")
        os.environ["MATPLOTLIBRC"] = _rc
        os.environ.setdefault("MPLCONFIGDIR", os.path.dirname(_rc))
    except OSError:
        pass
_proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
sys.stdin = open(os.devnull)


def _write(fd, data):
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _send(obj):
    sys.stdout.flush()
    sys.stderr.flush()
    if obj.get("t") == "done":
        # a barrier on stderr first: the server waits for it, so no stderr of this call
        # arrives after the result
        _write(2, b"\x1eSBX" + json.dumps({"t": "err-done", "id": obj["id"]}).encode() + b"\x1f")
    _write(1, b"\x1eSBX" + json.dumps(obj).encode() + b"\x1f")


def _readline():
    line = b""
    while not line.endswith(b"\n"):
        try:
            c = _proto_in.read(1)
        except KeyboardInterrupt:
            continue
        if not c:
            return None
        line += c
    return line


def _figures():
    plt = sys.modules.get("matplotlib.pyplot")
    out = []
    if plt is None:
        return out
    try:
        for num in plt.get_fignums():
            buf = io.BytesIO()
            plt.figure(num).savefig(buf, format="png")
            out.append({"image/png": base64.b64encode(buf.getvalue()).decode(),
                        "text/plain": "<Figure %d>" % num})
        plt.close("all")
    except Exception:
        pass
    return out


# Packages that code_install_package puts in the session (pip --target): on sys.path where
# PYTHONPATH would put them (also when the session's policy predates it), and the import
# caches dropped when the directory changes, so that a package installed while this context
# lives imports at once (a module imported before keeps its old version until a reset).
_PACKAGES = "/workspace/.packages/python"
if _PACKAGES not in sys.path:
    sys.path.insert(1 if sys.path else 0, _PACKAGES)
_packages_seen = None


def _packages_changed():
    global _packages_seen
    try:
        st = os.stat(_PACKAGES)
        now = (st.st_ino, st.st_mtime_ns)
    except OSError:
        now = None
    if now != _packages_seen:
        _packages_seen = now
        importlib.invalidate_caches()


_ns = {"__name__": "__main__", "__builtins__": __builtins__}
_cell = 0


def _run(code):
    global _cell
    _cell += 1
    name = "<cell-%d>" % _cell
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    tree = ast.parse(code, name, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), _ns)
    if last is not None:
        value = eval(compile(last, name, "eval"), _ns)
        if value is not None:
            _ns["_"] = value
            return [{"text/plain": repr(value)}]
    return []


def _error(e):
    tb = traceback.TracebackException.from_exception(e)
    # drop the driver's own frames: the cell is what the model wrote
    tb.stack = traceback.StackSummary.from_list(
        [f for f in tb.stack if not f.filename.endswith("driver.py")])
    return {"name": type(e).__name__, "value": str(e), "traceback": "".join(tb.format())}


signal.signal(signal.SIGINT, signal.default_int_handler)
_send({"t": "ready", "pid": os.getpid()})
while True:
    line = _readline()
    if line is None:
        break
    try:
        rid, b64 = line.split(None, 1)
        code = base64.b64decode(b64).decode("utf-8", "replace")
    except ValueError:
        continue
    reply = {"t": "done", "id": int(rid), "exit_code": 0, "results": []}
    try:
        _packages_changed()
        reply["results"] = _run(code)
    except SystemExit as e:
        c = e.code
        reply["exit_code"] = c if isinstance(c, int) else (0 if c is None else 1)
        if c is not None and not isinstance(c, int):
            print(c, file=sys.stderr)
    except BaseException as e:  # KeyboardInterrupt too: the state survives it
        reply["exit_code"] = 1
        reply["error"] = _error(e)
        sys.stderr.write(reply["error"]["traceback"])
    reply["results"] += _figures()
    try:
        _send(reply)
    except KeyboardInterrupt:
        _send(reply)
