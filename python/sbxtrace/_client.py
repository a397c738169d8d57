"""A small MCP client for ``sbxtrace mcp``: JSON-RPC 2.0 over the stdio of a spawned server
(newline-delimited messages) or over Streamable HTTP (one POST per message, JSON replies).

Only what the sandbox API needs: ``initialize``, ``tools/list``, ``tools/call``,
``notifications/cancelled``, and answering the server's ``ping``. Whatever this client does
an MCP host can do too: there is no second protocol.

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
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple, TypeVar

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


class _Pending:
    __slots__ = ("event", "msg")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.msg: Optional[Dict[str, Any]] = None


class StdioTransport:
    """One spawned ``sbxtrace mcp`` process, spoken to over its stdin and stdout."""

    def __init__(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None) -> None:
        self.argv = list(argv)
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Pending] = {}
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

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in iter(self.proc.stderr.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def stderr_tail(self) -> str:
        """The last lines the server wrote on stderr."""
        return "\n".join(self._stderr)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if "method" in msg:
                if "id" in msg:  # a request from the server
                    if msg["method"] == "ping":
                        self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
                    else:
                        self._send({"jsonrpc": "2.0", "id": msg["id"], "error": {
                            "code": -32601, "message": "not supported by this client"}})
                continue
            with self._lock:
                p = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
            if p:
                p.msg = msg
                p.event.set()
        self._dead = True
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for p in pending:
            p.event.set()

    def _send(self, msg: Dict[str, Any]) -> None:
        data = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        try:
            with self._wlock:
                assert self.proc.stdin is not None
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
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

    def request(self, method: str, params: Optional[Dict[str, Any]],
                timeout: float) -> Dict[str, Any]:
        """Send a request and wait for its answer; returns the JSON-RPC ``result``."""
        rid = next(self._ids)
        p = _Pending()
        with self._lock:
            if self._dead:
                raise ServerDied(self._died_message())
            self._pending[rid] = p
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        try:
            self._send(msg)
        except ServerDied:
            with self._lock:
                self._pending.pop(rid, None)
            raise
        if not p.event.wait(timeout):
            with self._lock:
                self._pending.pop(rid, None)
            try:
                self.notify("notifications/cancelled",
                            {"requestId": rid, "reason": "client timeout"})
            except ServerDied:
                pass
            raise SandboxTimeout(f"{method}: no answer from sbxtrace mcp within "
                                 f"{timeout:g} s; the request was cancelled")
        if p.msg is None:
            raise ServerDied(self._died_message())
        return _unwrap(p.msg, method)

    def close(self) -> None:
        """Stop the server: close its stdin, then terminate it if it lingers."""
        try:
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
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass


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

    def _post(self, msg: Dict[str, Any], timeout: float) -> Tuple[int, Dict[str, str], bytes]:
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
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except urllib.error.HTTPError as e:
            body = e.read().decode("utf-8", "replace")[:500]
            if e.code == 404 and self.mcp_session_id:
                raise _SessionGone() from e
            if e.code == 401:
                raise SandboxError(f"{self.url}: 401 unauthorized: the server needs a valid "
                                   "bearer token (token=...)") from e
            raise SandboxError(f"{self.url}: HTTP {e.code}: {body}") from e
        except (TimeoutError, OSError) as e:
            if "timed out" in str(e):
                raise SandboxTimeout(f"{self.url}: no answer within {timeout:g} s") from e
            raise SandboxError(f"{self.url}: cannot reach sbxtrace mcp: {e}") from e

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send a JSON-RPC notification (the server answers 202)."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._post(msg, 30)

    def request(self, method: str, params: Optional[Dict[str, Any]],
                timeout: float) -> Dict[str, Any]:
        """POST a request; returns the JSON-RPC ``result``."""
        rid = next(self._ids)
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        _, headers, body = self._post(msg, timeout)
        if method == "initialize" and headers.get("mcp-session-id"):
            self.mcp_session_id = headers["mcp-session-id"]
        if headers.get("content-type", "").startswith("text/event-stream"):
            for line in body.decode("utf-8", "replace").splitlines():
                if line.startswith("data:"):
                    m = json.loads(line[5:])
                    if isinstance(m, dict) and m.get("id") == rid:
                        return _unwrap(m, method)
            raise SandboxError(f"{method}: the event stream ended without an answer")
        return _unwrap(json.loads(body), method)

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
                timeout: float = DEFAULT_REQUEST_TIMEOUT_S) -> Dict[str, Any]:
        """One JSON-RPC request, connecting (or restarting a dead server) first."""
        t = self._connect()
        try:
            return t.request(method, params, timeout)
        except _SessionGone:
            with self._lock:
                if self._transport is t:
                    t.mcp_session_id = None
                    self._initialize(t)
            return t.request(method, params, timeout)

    def tools(self) -> List[str]:
        """The names of the server's tools (``tools/list``, cached)."""
        if self._tools is None:
            res = self.request("tools/list", {})
            self._tools = [x.get("name", "") for x in res.get("tools", [])]
        return self._tools

    def call_tool(self, name: str, arguments: Dict[str, Any], *,
                  timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
                  error_is_result: bool = False) -> Tuple[Dict[str, Any], bool]:
        """Call a tool; returns ``(structuredContent, isError)``.

        A result with ``isError`` raises (see :func:`classify_tool_error`) unless
        ``error_is_result`` and the result is a structured one (code that failed)."""
        res = self.request("tools/call", {"name": name, "arguments": arguments}, timeout)
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
