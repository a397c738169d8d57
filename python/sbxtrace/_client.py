"""A small MCP client for ``sbxtrace mcp``: JSON-RPC 2.0 over the stdio of a spawned server
(newline-delimited messages) or over Streamable HTTP (one POST per message; a ``tools/call``
is answered with JSON or, since the client accepts ``text/event-stream``, an SSE stream).

Only what the sandbox API needs: ``initialize``, ``tools/list``, ``tools/call`` (with a
``progressToken`` when the caller wants live output: ``notifications/progress`` are handed to
its callback, on the calling thread, while it waits for the answer), ``notifications/cancelled``,
and answering the server's ``ping``. Whatever this client does an MCP host can do too: there
is no second protocol.

A spawned server that dies is detected (its stdout reaches EOF); the call in flight fails
with :class:`~sbxtrace.errors.ServerDied` and the next call spawns a new server on the same
``--data-dir``, where every session and its workspace are still there (the server re-reads
its sessions at start).
"""
from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import json
import os
import queue
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from typing import (Any, Callable, Deque, Dict, Iterable, List, Optional, Sequence, Tuple,
                    TypeVar)

from .errors import (ApprovalRequired, BinaryNotFound, ProtocolError, SandboxError,
                     SandboxTimeout, ServerDied, SessionNotFound)

PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "sbxtrace-python", "version": "0.1.0"}
#: Seconds a request may take beyond the code's own timeout before the client gives up.
GRACE_S = 30.0
DEFAULT_REQUEST_TIMEOUT_S = 120.0

T = TypeVar("T")


def find_binary(binary: Optional[str] = None) -> str:
    """The ``sbxtrace`` executable: ``binary`` if given, else ``$SBXTRACE_BIN``, else the
    first ``sbxtrace`` on ``PATH``. Raises :class:`BinaryNotFound` otherwise."""
    cand = binary or os.environ.get("SBXTRACE_BIN")
    if cand:
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.abspath(cand)
        found = shutil.which(cand)
        if found:
            return found
        raise BinaryNotFound(f"sbxtrace binary {cand!r} (from "
                             f"{'the argument' if binary else 'SBXTRACE_BIN'}) is not an "
                             "executable file")
    found = shutil.which("sbxtrace")
    if not found:
        raise BinaryNotFound("sbxtrace is not on PATH and SBXTRACE_BIN is not set: install "
                             "sbxtrace (meson install) or set SBXTRACE_BIN=/path/to/sbxtrace")
    return found


def default_data_dir() -> str:
    """The per-user session directory, the same the server uses by default:
    ``$XDG_STATE_HOME/sbxtrace/sessions`` or ``~/.local/state/sbxtrace/sessions``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"),
                                                               ".local", "state")
    return os.path.join(base, "sbxtrace", "sessions")


def classify_tool_error(tool: str, structured: Optional[Dict[str, Any]], text: str) -> SandboxError:
    """The exception for a tool result with ``isError`` (other than code that failed, which
    is a result): :class:`ApprovalRequired` when the server says ``approval_required``,
    :class:`SessionNotFound` for an unknown session, else :class:`SandboxError`."""
    s = structured or {}
    marker = s.get("error") or s.get("code") or s.get("status")
    if s.get("approval_required") or marker == "approval_required" \
            or text.startswith("approval_required"):
        reason = str(s.get("reason") or s.get("message") or text)
        return ApprovalRequired(f"{tool}: approval required: {reason}", reason=reason,
                                tool=tool, result=structured)
    if text.startswith("unknown session"):
        return SessionNotFound(f"{tool}: {text}", tool=tool, result=structured)
    return SandboxError(f"{tool}: {text or 'the server refused the call'}", tool=tool,
                        result=structured)


#: A callback for a call's ``notifications/progress`` (their ``params``).
ProgressCallback = Callable[[Dict[str, Any]], Any]


class _Pending:
    """A request waiting for its answer: the reader thread puts ``("progress", params)``,
    then ``("answer", msg)`` (or ``("dead", None)``) on its queue."""

    __slots__ = ("q", "token")

    def __init__(self, token: Optional[str] = None) -> None:
        self.q: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self.token = token


def _wait_answer(p: _Pending, timeout: float,
                 on_progress: Optional[ProgressCallback]) -> Tuple[str, Any]:
    """Wait for ``p``'s answer until ``timeout``, running ``on_progress`` for the progress
    notifications that come first (on this thread). Returns ``("answer", msg)``,
    ``("dead", None)`` or ``("timeout", None)``."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout", None
        try:
            kind, val = p.q.get(timeout=left)
        except queue.Empty:
            return "timeout", None
        if kind == "progress":
            if on_progress is not None:
                on_progress(val)
            continue
        return kind, val


class StdioTransport:
    """One spawned ``sbxtrace mcp`` process, spoken to over its stdin and stdout."""

    def __init__(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None) -> None:
        self.argv = list(argv)
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Pending] = {}
        self._progress: Dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self._wlock = threading.Lock()
        self._stderr: Deque[str] = collections.deque(maxlen=40)
        self._dead = False
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, bufsize=0)
        threading.Thread(target=self._read, daemon=True, name="sbxtrace-mcp-out").start()
        threading.Thread(target=self._drain_stderr, daemon=True,
                         name="sbxtrace-mcp-err").start()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the server is running and its stdout open."""
        return not self._dead and self.proc.poll() is None

    @staticmethod
    def _lines_of(f: Any) -> Iterable[bytes]:
        """The lines of the pipe ``f``, read in chunks by the calling thread, which alone
        closes it at the end: a pipe closed by another thread while this one reads could
        see its descriptor reused by the next server's pipes, and steal their bytes."""
        pending = b""
        try:
            while True:
                try:
                    chunk = f.read(65536)
                except (OSError, ValueError):
                    return
                if not chunk:
                    if pending:
                        yield pending
                    return
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    yield line + b"\n"
        finally:
            try:
                f.close()
            except OSError:
                pass

    def _drain_stderr(self) -> None:
        for raw in self._lines_of(self.proc.stderr):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _lines(self) -> Iterable[bytes]:
        return self._lines_of(self.proc.stdout)

    def stderr_tail(self) -> str:
        """The last lines the server wrote on stderr."""
        return "\n".join(self._stderr)

    def _read(self) -> None:
        for raw in self._lines():
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if "method" in msg:
                if "id" in msg:  # a request from the server
                    try:
                        self._send(_answer_server_request(msg))
                    except ServerDied:
                        pass
                elif msg["method"] == "notifications/progress":
                    params = msg.get("params") or {}
                    with self._lock:
                        p = self._progress.get(str(params.get("progressToken")))
                    if p:
                        p.q.put(("progress", params))
                continue
            with self._lock:
                p = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
                if p and p.token is not None:
                    self._progress.pop(p.token, None)
            if p:
                p.q.put(("answer", msg))
        self._dead = True
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
            self._progress = {}
        for p in pending:
            p.q.put(("dead", None))

    def _send(self, msg: Dict[str, Any]) -> None:
        data = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        try:
            with self._wlock:
                assert self.proc.stdin is not None
                view = memoryview(data)
                while view:  # unbuffered: a write may take only a part
                    n = self.proc.stdin.write(view)
                    if not n:
                        raise BrokenPipeError("the server's stdin takes no more")
                    view = view[n:]
        except (BrokenPipeError, OSError, ValueError) as e:
            self._dead = True
            raise ServerDied(self._died_message()) from e

    def _died_message(self) -> str:
        rc = self.proc.poll()
        tail = self.stderr_tail()
        return (f"sbxtrace mcp (pid {self.proc.pid}) exited"
                + (f" with status {rc}" if rc is not None else "")
                + " during the call; the next call starts a new server"
                + (f"; its stderr:\n{tail}" if tail else ""))

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send a JSON-RPC notification."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def request(self, method: str, params: Optional[Dict[str, Any]], timeout: float,
                on_progress: Optional[ProgressCallback] = None) -> Dict[str, Any]:
        """Send a request and wait for its answer; returns the JSON-RPC ``result``. With
        ``on_progress``, the request carries a ``progressToken`` and the server's
        ``notifications/progress`` for it are handed to ``on_progress`` meanwhile."""
        rid = next(self._ids)
        token = f"sbxtrace-py-{rid}" if on_progress is not None else None
        p = _Pending(token)
        with self._lock:
            if self._dead:
                raise ServerDied(self._died_message())
            self._pending[rid] = p
            if token is not None:
                self._progress[token] = p
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = _with_token(params, token)
        try:
            self._send(msg)
        except ServerDied:
            with self._lock:
                self._pending.pop(rid, None)
                if token is not None:
                    self._progress.pop(token, None)
            raise
        try:
            kind, answer = _wait_answer(p, timeout, on_progress)
        except BaseException:  # the callback raised (or KeyboardInterrupt): cancel the call
            self._forget(rid, token, "the client stopped waiting")
            raise
        if kind == "timeout":
            self._forget(rid, token, "client timeout")
            raise SandboxTimeout(f"{method}: no answer from sbxtrace mcp within "
                                 f"{timeout:g} s; the request was cancelled")
        if kind == "dead":
            raise ServerDied(self._died_message())
        return _unwrap(answer, method)

    def _forget(self, rid: int, token: Optional[str], reason: Optional[str]) -> None:
        with self._lock:
            self._pending.pop(rid, None)
            if token is not None:
                self._progress.pop(token, None)
        if reason is not None:
            try:
                self.notify("notifications/cancelled", {"requestId": rid, "reason": reason})
            except ServerDied:
                pass

    def close(self) -> None:
        """Stop the server: close its stdin, then terminate it if it lingers. Its stdout and
        stderr are closed by the threads that read them, when they end."""
        try:
            with self._wlock:
                if self.proc.stdin:
                    self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _with_token(params: Dict[str, Any], token: Optional[str]) -> Dict[str, Any]:
    """``params`` with ``_meta.progressToken`` when there is a token."""
    if token is None:
        return params
    meta = dict(params.get("_meta") or {})
    meta["progressToken"] = token
    return {**params, "_meta": meta}


def _answer_server_request(msg: Dict[str, Any]) -> Dict[str, Any]:
    """The answer to a request from the server: ``ping`` is answered; everything else
    (sampling, elicitation, which this client does not declare) is refused."""
    if msg.get("method") == "ping":
        return {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
    return {"jsonrpc": "2.0", "id": msg["id"],
            "error": {"code": -32601, "message": "not supported by this client"}}


def _unwrap(msg: Dict[str, Any], method: str) -> Dict[str, Any]:
    if "error" in msg:
        err = msg["error"] or {}
        text = str(err.get("message", "error"))
        data = err.get("data")
        if "approval_required" in text or (isinstance(data, dict)
                                           and data.get("approval_required")):
            reason = str((data or {}).get("reason", text)) if isinstance(data, dict) else text
            raise ApprovalRequired(f"{method}: approval required: {reason}", reason=reason)
        raise ProtocolError(f"{method}: JSON-RPC error {err.get('code')}: {text}",
                            code=int(err.get("code") or 0))
    res = msg.get("result")
    return res if isinstance(res, dict) else {}


class HttpTransport:
    """Streamable HTTP to a running ``sbxtrace mcp --http``: one POST per message with
    ``Authorization: Bearer TOKEN`` when a token is given, and the ``Mcp-Session-Id`` the
    server handed out at ``initialize``."""

    def __init__(self, url: str, token: Optional[str] = None) -> None:
        self.url = url
        self.token = token
        self.mcp_session_id: Optional[str] = None
        self._ids = itertools.count(1)

    def alive(self) -> bool:  # a remote server is not ours to watch
        """Always true: a remote server's health shows in its answers."""
        return True

    def _open(self, msg: Dict[str, Any], timeout: float) -> Any:
        """POST ``msg``; returns the open response (the caller closes it)."""
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": PROTOCOL_VERSION}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.mcp_session_id:
            headers["Mcp-Session-Id"] = self.mcp_session_id
        req = urllib.request.Request(self.url, data=json.dumps(msg).encode(), headers=headers,
                                     method="POST")
        try:
            return urllib.request.urlopen(req, timeout=timeout)
        except urllib.error.HTTPError as e:
            body = e.read().decode("utf-8", "replace")[:500]
            if e.code == 404 and self.mcp_session_id:
                raise _SessionGone() from e
            if e.code == 401:
                raise SandboxError(f"{self.url}: 401 unauthorized: the server needs a valid "
                                   "bearer token (token=...)") from e
            raise SandboxError(f"{self.url}: HTTP {e.code}: {body}") from e
        except (TimeoutError, OSError) as e:
            raise _net_error(self.url, e, timeout) from e

    def _post(self, msg: Dict[str, Any], timeout: float) -> Tuple[int, Dict[str, str], bytes]:
        r = self._open(msg, timeout)
        try:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except (TimeoutError, OSError) as e:
            raise _net_error(self.url, e, timeout) from e
        finally:
            r.close()

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send a JSON-RPC notification (the server answers 202)."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._post(msg, 30)

    def request(self, method: str, params: Optional[Dict[str, Any]], timeout: float,
                on_progress: Optional[ProgressCallback] = None) -> Dict[str, Any]:
        """POST a request; returns the JSON-RPC ``result``. An SSE answer is read as it
        comes: ``notifications/progress`` for this call go to ``on_progress`` (the request
        carries a ``progressToken`` when it is given), the server's requests are answered,
        and the response ends it. Past ``timeout`` the stream is closed, which cancels the
        call on the server."""
        rid = next(self._ids)
        token = f"sbxtrace-py-{rid}" if on_progress is not None else None
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = _with_token(params, token)
        deadline = time.monotonic() + timeout
        r = self._open(msg, timeout)
        try:
            headers = {k.lower(): v for k, v in r.headers.items()}
            if method == "initialize" and headers.get("mcp-session-id"):
                self.mcp_session_id = headers["mcp-session-id"]
            if headers.get("content-type", "").startswith("text/event-stream"):
                return self._read_stream(r, rid, token, method, deadline, timeout, on_progress)
            try:
                body = r.read()
            except (TimeoutError, OSError) as e:
                raise _net_error(self.url, e, timeout) from e
            return _unwrap(json.loads(body), method)
        finally:
            r.close()

    def _read_stream(self, r: Any, rid: int, token: Optional[str], method: str,
                     deadline: float, timeout: float,
                     on_progress: Optional[ProgressCallback]) -> Dict[str, Any]:
        data: List[str] = []

        def event(text: str) -> Optional[Dict[str, Any]]:
            try:
                m = json.loads(text)
            except ValueError:
                return None
            if not isinstance(m, dict):
                return None
            if "method" in m:
                if "id" in m:  # the server's request: answered by a POST of its own
                    self._post(_answer_server_request(m), 30)
                elif m["method"] == "notifications/progress" and on_progress is not None:
                    params = m.get("params") or {}
                    if str(params.get("progressToken")) == token:
                        on_progress(params)
                return None
            return m if m.get("id") == rid else None

        while True:
            if time.monotonic() > deadline:
                raise SandboxTimeout(f"{method}: no answer from {self.url} within "
                                     f"{timeout:g} s; the stream was closed, which cancels "
                                     "the call")
            try:
                raw = r.readline()
            except (TimeoutError, OSError) as e:
                raise _net_error(self.url, e, timeout) from e
            line = raw.decode("utf-8", "replace").rstrip("\r\n") if raw else ""
            if not raw or line == "":  # the end of an event (or of the stream)
                if data:
                    m = event("\n".join(data))
                    data = []
                    if m is not None:
                        return _unwrap(m, method)
                if not raw:
                    raise SandboxError(f"{method}: the event stream ended without an answer")
                continue
            if line.startswith(":"):  # a comment: the keepalive
                continue
            name, _, value = line.partition(":")
            if name == "data":
                data.append(value[1:] if value.startswith(" ") else value)

    def close(self) -> None:
        """End the MCP session (HTTP DELETE); the sandbox sessions stay."""
        if not self.mcp_session_id:
            return
        req = urllib.request.Request(self.url, method="DELETE",
                                     headers={"Mcp-Session-Id": self.mcp_session_id,
                                              **({"Authorization": f"Bearer {self.token}"}
                                                 if self.token else {})})
        try:
            urllib.request.urlopen(req, timeout=5).close()
        except (urllib.error.URLError, OSError):
            pass
        self.mcp_session_id = None


def _net_error(url: str, e: BaseException, timeout: float) -> SandboxError:
    if isinstance(e, TimeoutError) or "timed out" in str(e):
        return SandboxTimeout(f"{url}: no answer within {timeout:g} s")
    return SandboxError(f"{url}: cannot reach sbxtrace mcp: {e}")


class _SessionGone(Exception):
    """The HTTP server forgot our MCP session (it restarted): initialize again."""


class Client:
    """An MCP client for ``sbxtrace mcp``, shared by every sandbox object that uses it.

    With ``url``, it talks to a running server over HTTP (``token`` is the tenant's bearer
    token). Otherwise it spawns ``sbxtrace mcp --data-dir DATA_DIR`` (``binary`` or
    ``$SBXTRACE_BIN`` or ``PATH``; ``data_dir`` defaults to the per-user directory; ``config``
    is passed as ``--config``) on the first call, and again on the call after it died.

    Thread-safe: calls from several threads (and the asyncio wrappers) run concurrently.
    """

    def __init__(self, *, url: Optional[str] = None, token: Optional[str] = None,
                 binary: Optional[str] = None, data_dir: Optional[str] = None,
                 config: Optional[str] = None, extra_args: Sequence[str] = ()) -> None:
        self.url = url
        self.token = token
        self.binary = None if url else find_binary(binary)
        self.data_dir = None if url else os.path.abspath(data_dir or default_data_dir())
        self.config = config
        self.extra_args = list(extra_args)
        self.restarts = 0
        self.server_info: Dict[str, Any] = {}
        self._transport: Any = None
        self._tools: Optional[List[str]] = None
        self._lock = threading.Lock()

    # -- connection ----------------------------------------------------------------------
    def _argv(self) -> List[str]:
        assert self.binary and self.data_dir
        argv = [self.binary, "mcp", "--data-dir", self.data_dir]
        if self.config:
            argv += ["--config", self.config]
        return argv + self.extra_args

    def _connect(self) -> Any:
        with self._lock:
            t = self._transport
            if t is not None and t.alive():
                return t
            if t is not None:
                t.close()
                self.restarts += 1
            if self.url:
                t = HttpTransport(self.url, self.token)
            else:
                assert self.data_dir
                os.makedirs(self.data_dir, mode=0o700, exist_ok=True)
                t = StdioTransport(self._argv())
            self._initialize(t)
            self._transport = t
            return t

    def _initialize(self, t: Any) -> None:
        res = t.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                       "clientInfo": CLIENT_INFO}, 30)
        self.server_info = res.get("serverInfo", {})
        t.notify("notifications/initialized")

    @property
    def server_pid(self) -> Optional[int]:
        """The pid of the spawned server (``None`` over HTTP or before the first call)."""
        t = self._transport
        return t.pid if isinstance(t, StdioTransport) else None

    def request(self, method: str, params: Optional[Dict[str, Any]] = None,
                timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
                on_progress: Optional[ProgressCallback] = None) -> Dict[str, Any]:
        """One JSON-RPC request, connecting (or restarting a dead server) first. With
        ``on_progress``, the request carries a ``progressToken`` and each
        ``notifications/progress`` for it is passed (its ``params``) to ``on_progress``,
        on the calling thread, before the answer is returned."""
        t = self._connect()
        try:
            return t.request(method, params, timeout, on_progress)
        except _SessionGone:
            with self._lock:
                if self._transport is t:
                    t.mcp_session_id = None
                    self._initialize(t)
            return t.request(method, params, timeout, on_progress)

    def tools(self) -> List[str]:
        """The names of the server's tools (``tools/list``, cached)."""
        if self._tools is None:
            res = self.request("tools/list", {})
            self._tools = [x.get("name", "") for x in res.get("tools", [])]
        return self._tools

    def call_tool(self, name: str, arguments: Dict[str, Any], *,
                  timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
                  error_is_result: bool = False,
                  on_progress: Optional[ProgressCallback] = None) -> Tuple[Dict[str, Any], bool]:
        """Call a tool; returns ``(structuredContent, isError)``.

        A result with ``isError`` raises (see :func:`classify_tool_error`) unless
        ``error_is_result`` and the result is a structured one (code that failed).
        ``on_progress``: see :meth:`request` (``code_execute`` sends its live output so)."""
        res = self.request("tools/call", {"name": name, "arguments": arguments}, timeout,
                           on_progress)
        structured = res.get("structuredContent")
        is_error = bool(res.get("isError"))
        text = " ".join(c.get("text", "") for c in res.get("content", [])
                        if isinstance(c, dict) and c.get("type") == "text").strip()
        if is_error:
            exc = classify_tool_error(name, structured, text)
            if not (error_is_result and isinstance(structured, dict)
                    and type(exc) is SandboxError):
                raise exc
        return (structured if isinstance(structured, dict) else {}), is_error

    def kill_server(self) -> None:
        """Kill the spawned server with SIGKILL (for tests of the restart path)."""
        t = self._transport
        if isinstance(t, StdioTransport):
            t.proc.kill()
            t.proc.wait()

    def close(self) -> None:
        """Stop the spawned server (or end the HTTP MCP session). Sessions stay on disk."""
        with self._lock:
            if self._transport is not None:
                self._transport.close()
                self._transport = None


_shared: Dict[Tuple[Any, ...], Client] = {}
_shared_lock = threading.Lock()


def get_client(*, url: Optional[str] = None, token: Optional[str] = None,
               binary: Optional[str] = None, data_dir: Optional[str] = None,
               config: Optional[str] = None) -> Client:
    """The process-wide client for these settings (one spawned server per data directory
    and config in a process). ``url`` and ``token`` default to ``$SBXTRACE_URL`` and
    ``$SBXTRACE_TOKEN``; ``data_dir`` to ``$SBXTRACE_DATA_DIR`` or the per-user one."""
    url = url or os.environ.get("SBXTRACE_URL") or None
    token = token or os.environ.get("SBXTRACE_TOKEN") or None
    if not url:
        binary = find_binary(binary)
        data_dir = os.path.abspath(data_dir or os.environ.get("SBXTRACE_DATA_DIR")
                                   or default_data_dir())
    key = (url, token, binary, data_dir, config)
    with _shared_lock:
        c = _shared.get(key)
        if c is None:
            c = _shared[key] = Client(url=url, token=token, binary=binary, data_dir=data_dir,
                                      config=config)
        return c


async def run_async(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking client call in the default thread executor."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(fn, *args, **kwargs))
