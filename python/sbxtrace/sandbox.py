"""Seeds 000 and 004: one :class:`Sandbox` class with seed 000's ``run(command,
bind_mounts, isolate_network, isolate_pid, cwd, timeout) -> SandboxResult`` and seed 004's
``start() / execute(command, timeout) -> ExecutionResult / stop()`` and ``async with``;
:class:`BindMount`, :class:`NetworkMode`, :func:`get_sandbox`, the private-data ratchet
(:func:`add_private_dataset`, :class:`PrivateData`) and :func:`validate_workspace`.

The sandbox is a session of ``sbxtrace mcp``: created on the first call that needs it (seed
000's lazy creation), its ``/workspace`` persists across calls, across a crash of the code
and across a restart of the server (seed 000's failure recovery).
"""
from __future__ import annotations

import base64
import enum
import json
import os
import pickle
import posixpath
import shlex
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ._client import Client, get_client, run_async
from ._session import WORKSPACE, Session
from .errors import InvalidWorkspace, SandboxError
from .results import ExecutionResult, SandboxResult


class NetworkMode(str, enum.Enum):
    """Seed 000's network modes, on the server's: ``FULL`` (the seed's bridge), ``PROXIED``
    (the seed's whitelist proxy: our ``allowlist`` of destinations), ``NONE``; and
    ``LOOPBACK`` (the sandbox's own loopback only). Which ones an agent may ask for is the
    server operator's choice (``[network] modes``; default ``none`` and ``loopback``)."""

    FULL = "full"
    PROXIED = "allowlist"
    LOOPBACK = "loopback"
    NONE = "none"


class DataLevel(str, enum.Enum):
    """Seed 000's sensitivity levels. ``PUBLIC`` changes nothing; ``INTERNAL`` keeps the
    network; ``CONFIDENTIAL`` leaves the operator's trusted allowlist; ``SECRET`` cuts it."""

    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    SECRET = "secret"


@dataclass(frozen=True)
class BindMount:
    """Seed 000's ``BindMount(source, target, readonly)``: host ``source`` seen at ``target``.

    The server has no per-session mount table, so a mount is *emulated* for targets at or
    below ``/workspace``: ``source`` is copied in before the command; for a read-write mount
    the tree at ``target`` is copied back to ``source`` after it. Other targets raise
    :class:`NotImplementedError`.
    """

    source: Union[str, Path]
    target: str
    readonly: bool = False


#: Seed 004's blocked workspaces.
_BLOCKED = ("/etc", "/usr", "/bin", "/sbin", "/boot", "/dev", "/proc", "/sys", "/root",
            "/var", "/lib", "/lib64")
_ALLOWED_UNDER_VAR = ("/var/folders", "/var/tmp")


def validate_workspace(workspace: Union[str, Path],
                       workspace_root: Optional[Union[str, Path]] = None) -> Path:
    """Seed 004's check: refuse ``/``, the system directories (``/etc``, ``/usr``, ``/bin``,
    ``/sbin``, ``/boot``, ``/dev``, ``/proc``, ``/sys``, ``/root``) and ``/var`` (except
    ``/var/folders`` and ``/var/tmp``), checking the path as given and resolved; with
    ``workspace_root``, the workspace must be below it. Returns the resolved path or raises
    :class:`~sbxtrace.errors.InvalidWorkspace`."""
    given = Path(os.path.abspath(os.path.expanduser(str(workspace))))
    resolved = given.resolve()
    for p in {given, resolved}:
        s = str(p)
        if s == "/":
            raise InvalidWorkspace(f"workspace {workspace}: the root filesystem cannot be a "
                                   "workspace")
        if any(s == a or s.startswith(a + "/") for a in _ALLOWED_UNDER_VAR):
            continue
        for b in _BLOCKED:
            if s == b or s.startswith(b + "/"):
                raise InvalidWorkspace(f"workspace {workspace}: {b} is a system directory")
    if workspace_root is not None:
        root = Path(workspace_root).resolve()
        if resolved != root and root not in resolved.parents:
            raise InvalidWorkspace(f"workspace {workspace}: not below the workspace root "
                                   f"{root}")
    return resolved


def _wrap_python(code: str, marker: str, serializer: str) -> str:
    """A Python driver: load ``inputs`` from stdin, run ``code`` with it in its namespace,
    print the namespace's ``result`` after ``marker`` on the original stdout."""
    return f"""import sys, os, json, base64
_ser = {serializer!r}
_raw = sys.stdin.buffer.read()
if _ser == "pickle":
    import pickle
    _ctx = pickle.loads(base64.b64decode(_raw)) if _raw else {{}}
else:
    _ctx = json.loads(_raw) if _raw else {{}}
_ns = {{"__name__": "__main__", "inputs": _ctx}}
if isinstance(_ctx, dict):
    _ns.update({{k: v for k, v in _ctx.items() if isinstance(k, str) and k.isidentifier()}})
_out = os.fdopen(os.dup(1), "w")
exec(compile({code!r}, "<sandbox>", "exec"), _ns)
sys.stdout.flush(); sys.stderr.flush()
_res = _ns.get("result")
if _ser == "pickle":
    _payload = base64.b64encode(pickle.dumps(_res)).decode()
else:
    _payload = json.dumps(_res, default=repr)
_out.write("\\n{marker}" + _payload + "\\n"); _out.flush()
"""


def _split_result(stdout: str, marker: str, serializer: str) -> "tuple[str, Any, bool]":
    idx = stdout.rfind("\n" + marker)
    if idx < 0:
        return stdout, None, False
    payload = stdout[idx + 1 + len(marker):].strip()
    out = stdout[:idx]
    if serializer == "pickle":
        # Deserialising what the sandboxed code produced runs code of its choice on the
        # host: this is only done when the caller asked for pickle (docs/python.md).
        return out, pickle.loads(base64.b64decode(payload)), True
    return out, json.loads(payload), True


def run_python_in(session: Session, code: str, inputs: Any = None, *, serializer: str = "json",
                  timeout: Optional[float] = None) -> SandboxResult:
    """Run Python ``code`` in ``session`` with ``inputs`` in its namespace (and, when a
    dict, each key as a variable); the value the code leaves in ``result`` comes back as
    :attr:`SandboxResult.result`. Inputs travel on stdin, the result on stdout after a
    random marker: nothing is left in the workspace. ``serializer`` is ``"json"``
    (default) or ``"pickle"`` — see :meth:`Sandbox.run_python` for pickle's risk."""
    if serializer not in ("json", "pickle"):
        raise ValueError("serializer must be 'json' or 'pickle'")
    marker = f"@@sbxtrace-result-{uuid.uuid4().hex}@@"
    if serializer == "pickle":
        stdin = base64.b64encode(pickle.dumps(inputs if inputs is not None else {})).decode()
    else:
        stdin = json.dumps(inputs if inputs is not None else {})
    r = session.execute(_wrap_python(code, marker, serializer), "python", timeout=timeout,
                        stdin=stdin)
    out, value, found = _split_result(r.stdout, marker, serializer)
    r.stdout = out
    sr = SandboxResult.from_execution(r)
    sr.result = value
    if r.ok and not found:
        sr.success = False
        sr.error = "the code ended without returning a result (did it call os._exit?)"
    return sr


class Sandbox:
    """A sandbox session (seeds 000 and 004).

    Seed 004: ``Sandbox(workspace, name)`` — ``workspace`` is a host directory, checked
    with :func:`validate_workspace` and created by :meth:`start`, which copies its files
    into the session's ``/workspace``; :meth:`stop` copies the workspace back to it and
    destroys the session. Without ``workspace`` the session's own directory is the only
    copy. Seed 000: :meth:`run` with ``bind_mounts``.

    Keyword arguments: ``policy`` (a server preset: ``standard``, ``strict``, ``python``,
    ``node``), ``network`` (:class:`NetworkMode`), ``allowed_domains`` (for ``PROXIED``),
    ``limits`` (``{wall_s, cpu_s, memory_mb, tasks, disk_mb, output_kb}``),
    ``idle_timeout_s``, ``session_id`` (attach to an existing session), and where the
    server is: ``client``, or ``url``/``token`` (HTTP), ``binary``/``data_dir`` (spawned).

    Every method is a coroutine (as both seeds ``await`` them); each has a blocking twin
    with a ``_sync`` suffix.
    """

    def __init__(self, workspace: Optional[Union[str, Path]] = None,
                 name: Optional[str] = None, *, policy: str = "standard",
                 network: Union[NetworkMode, str] = NetworkMode.NONE,
                 allowed_domains: Optional[Sequence[str]] = None,
                 limits: Optional[Dict[str, int]] = None,
                 idle_timeout_s: Optional[int] = None, session_id: Optional[str] = None,
                 client: Optional[Client] = None, url: Optional[str] = None,
                 token: Optional[str] = None, binary: Optional[str] = None,
                 data_dir: Optional[str] = None,
                 workspace_root: Optional[Union[str, Path]] = None) -> None:
        self.workspace = validate_workspace(workspace, workspace_root) if workspace else None
        self.name = name or "sandbox"
        if client is None:
            client = get_client(url=url, token=token, binary=binary, data_dir=data_dir)
        net: Dict[str, Any] = {"mode": NetworkMode(network).value}
        if allowed_domains:
            net["allowed_domains"] = list(allowed_domains)
        self.session = Session(client, session_id=session_id, policy=policy, network=net,
                               limits=dict(limits) if limits else None,
                               idle_timeout_s=idle_timeout_s)
        self.started = False
        self._private = PrivateData(self)

    # -- identity --------------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        """The server's session id (creates the session on first use)."""
        return self.session.id

    @property
    def client(self) -> Client:
        """The MCP client this sandbox talks through."""
        return self.session.client

    # -- seed 004: lifecycle -----------------------------------------------------------------
    def start_sync(self) -> None:
        """Create the host workspace (``parents=True``) if there is one, the session, and
        copy the workspace in."""
        if self.workspace is not None:
            self.workspace.mkdir(parents=True, exist_ok=True)
        _ = self.session.id
        if self.workspace is not None:
            self.session.push(str(self.workspace), WORKSPACE)
        self.started = True

    def stop_sync(self, destroy: bool = True) -> None:
        """Copy ``/workspace`` back to the host workspace (if there is one) and destroy the
        session (``destroy=False`` keeps it for another process to attach to)."""
        try:
            if self.workspace is not None and self.session.created:
                self.session.pull(WORKSPACE, str(self.workspace))
        finally:
            if destroy:
                self.session.destroy()
            self.started = False

    def sync_to_host(self) -> int:
        """Copy ``/workspace`` back to the host workspace now; returns files copied."""
        if self.workspace is None:
            raise SandboxError("this sandbox has no host workspace to copy to")
        return self.session.pull(WORKSPACE, str(self.workspace))

    def execute_sync(self, command: str, timeout: int = 30,
                     env: Optional[Dict[str, str]] = None) -> ExecutionResult:
        """Seed 004: run a shell command in ``/workspace``, a fresh ``sh -c`` each time (as
        the seed's ``docker exec``): files persist between commands, a ``cd`` or a variable
        does not."""
        return self.session.execute(command, "shell", timeout=timeout, env=env)

    async def start(self) -> None:
        """See :meth:`start_sync`."""
        await run_async(self.start_sync)

    async def stop(self, destroy: bool = True) -> None:
        """See :meth:`stop_sync`."""
        await run_async(self.stop_sync, destroy)

    async def execute(self, command: str, timeout: int = 30,
                      env: Optional[Dict[str, str]] = None) -> ExecutionResult:
        """See :meth:`execute_sync`."""
        return await run_async(self.execute_sync, command, timeout, env)

    async def __aenter__(self) -> "Sandbox":
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def __enter__(self) -> "Sandbox":
        self.start_sync()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop_sync()

    # -- seed 000: run ----------------------------------------------------------------------
    def run_sync(self, command: Union[str, Sequence[str]],
                 bind_mounts: Iterable[BindMount] = (),
                 isolate_network: Optional[bool] = None, isolate_pid: bool = True,
                 cwd: Optional[str] = None,
                 timeout: Optional[float] = None) -> SandboxResult:
        """Seed 000: run ``command`` (an argv list, or a shell string) in the session.

        ``bind_mounts``: targets at or below ``/workspace`` are emulated by copying (see
        :class:`BindMount`); others raise :class:`NotImplementedError`.
        ``isolate_network``: ``None`` keeps the session's mode; ``True`` needs a session
        without network (a session's network is fixed when it is created and only ever
        tightens), else :class:`NotImplementedError`; ``False`` is the session's mode.
        ``isolate_pid``: the sandbox always runs its own process tree that cannot see
        (no ``/proc``) or signal anything outside it; ``False`` cannot loosen that.
        A timeout is reported as ``timed_out=True`` (exit code 124), not raised. Each run
        is a process of its own (the session's files persist, nothing else does).
        """
        mounts = list(bind_mounts)
        for m in mounts:
            t = posixpath.normpath(m.target)
            if not (t == WORKSPACE or t.startswith(WORKSPACE + "/")):
                raise NotImplementedError(
                    f"BindMount(target={m.target!r}): sbxtrace mcp has no per-session mount "
                    "table (arbitrary bind mounts); only targets at or below /workspace are "
                    "emulated, by copying")
            if not os.path.exists(m.source):
                raise SandboxError(f"BindMount source {m.source} does not exist")
        if isolate_network:
            mode = self.get_network_mode_sync()
            if mode is not NetworkMode.NONE:
                raise NotImplementedError(
                    f"isolate_network=True on a session whose network is {mode.value}: "
                    "code_execute has no per-call network switch; create the Sandbox with "
                    "network=NetworkMode.NONE, or mark the session private "
                    "(add_private_dataset(..., 'secret')) to cut it for good")
        for m in mounts:
            self.session.push(str(m.source), posixpath.normpath(m.target))
        cmd = command if isinstance(command, str) else shlex.join(list(command))
        if cwd:
            cmd = f"cd {shlex.quote(cwd)} && {cmd}"
        r = self.session.execute(cmd, "shell", timeout=timeout)
        for m in mounts:
            if not m.readonly and os.path.isdir(m.source):
                self.session.pull(posixpath.normpath(m.target), str(m.source))
            elif not m.readonly:
                with open(m.source, "wb") as f:
                    f.write(self.session.read_bytes(posixpath.normpath(m.target)))
        return SandboxResult.from_execution(r)

    async def run(self, command: Union[str, Sequence[str]],
                  bind_mounts: Iterable[BindMount] = (),
                  isolate_network: Optional[bool] = None, isolate_pid: bool = True,
                  cwd: Optional[str] = None, timeout: Optional[float] = None) -> SandboxResult:
        """See :meth:`run_sync`."""
        return await run_async(self.run_sync, command, list(bind_mounts), isolate_network,
                               isolate_pid, cwd, timeout)

    def run_python_sync(self, code: str, inputs: Any = None, *, serializer: str = "json",
                        timeout: Optional[float] = None) -> SandboxResult:
        """Seed 000's input/output objects: run Python ``code`` with ``inputs`` (a dict's
        keys become variables, and ``inputs`` is the whole object); what it assigns to
        ``result`` is returned as :attr:`SandboxResult.result`.

        ``serializer="json"`` (default) is safe both ways. ``serializer="pickle"`` carries
        any picklable object, but unpickling the result runs code the sandboxed program
        chose, **on the host, outside the sandbox**: use it only for code you trust as
        much as the host process itself.
        """
        return run_python_in(self.session, code, inputs, serializer=serializer,
                             timeout=timeout)

    async def run_python(self, code: str, inputs: Any = None, *, serializer: str = "json",
                         timeout: Optional[float] = None) -> SandboxResult:
        """See :meth:`run_python_sync`."""
        return await run_async(self.run_python_sync, code, inputs, serializer=serializer,
                               timeout=timeout)

    # -- network and private data -------------------------------------------------------------
    def get_network_mode_sync(self) -> NetworkMode:
        """The session's current network mode (``code_sandbox_info``)."""
        return NetworkMode(self.session.sandbox_info().get("network_mode", "none"))

    async def get_network_mode(self) -> NetworkMode:
        """See :meth:`get_network_mode_sync`."""
        return await run_async(self.get_network_mode_sync)

    @property
    def private_data(self) -> "PrivateData":
        """This session's :class:`PrivateData` register."""
        return self._private

    def add_private_dataset(self, name: str,
                            level: Union[DataLevel, str] = DataLevel.CONFIDENTIAL) -> NetworkMode:
        """Register private data (the ratchet); returns the network mode afterwards."""
        return self._private.add_private_dataset(name, level)


class PrivateData:
    """Seed 000's compliance register for one sandbox: connectors call
    :meth:`add_private_dataset` when sensitive data enters the session; the server
    tightens the session's network for good (``code_mark_private``), and the next
    execution's result carries the ``[SYSTEM]`` notice."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.datasets: Dict[str, DataLevel] = {}
        self.level = DataLevel.PUBLIC
        self._lock = threading.Lock()

    def add_private_dataset(self, name: str,
                            level: Union[DataLevel, str] = DataLevel.CONFIDENTIAL) -> NetworkMode:
        """Register ``name`` at ``level``; returns the network mode afterwards."""
        lv = DataLevel(level.lower() if isinstance(level, str) else level)
        with self._lock:
            self.datasets[name] = lv
            order = list(DataLevel)
            if order.index(lv) > order.index(self.level):
                self.level = lv
        if lv is DataLevel.PUBLIC:
            return self.sandbox.get_network_mode_sync()
        s = self.sandbox.session.mark_private(lv.value, name)
        return NetworkMode(s.get("network_mode", "none"))

    def session_has_private_data(self) -> bool:
        """Whether anything above ``PUBLIC`` was registered here."""
        return self.level is not DataLevel.PUBLIC


_default: Optional[Sandbox] = None
_default_lock = threading.Lock()


def get_sandbox(**kwargs: Any) -> Sandbox:
    """Seed 000's factory. Without arguments: the process's default :class:`Sandbox`
    (one session, created lazily; the one :func:`add_private_dataset` marks by default).
    With arguments: a new :class:`Sandbox` (see its keyword arguments)."""
    global _default
    if kwargs:
        return Sandbox(**kwargs)
    with _default_lock:
        if _default is None:
            _default = Sandbox()
        return _default


def get_network_mode(sandbox: Optional[Sandbox] = None) -> NetworkMode:
    """Seed 000's ``get_network_mode``: the current mode of ``sandbox`` (default: the
    process's default sandbox)."""
    return (sandbox or get_sandbox()).get_network_mode_sync()


def add_private_dataset(name: str, level: Union[DataLevel, str] = DataLevel.CONFIDENTIAL,
                        sandbox: Optional[Sandbox] = None) -> NetworkMode:
    """Seed 000's ``PrivateData.add_private_dataset``: register dataset ``name`` at
    ``level`` (``internal``, ``confidential``, ``secret``) in ``sandbox`` (default: the
    process's default sandbox). The network only tightens: ``confidential`` leaves the
    operator's trusted allowlist, ``secret`` none. Returns the mode afterwards."""
    return (sandbox or get_sandbox()).add_private_dataset(name, level)
