"""Seed 003: the async :class:`SandboxManager`, one server session per sandbox.

``sandbox_id`` may be chosen by the caller (the manager maps it onto the server's
``sbx_…`` id) or left out (the server's id is returned). ``network_enabled=True`` asks for
the ``allowlist`` mode with ``allowed_domains`` (or ``full`` without), which the server
grants only if its operator allows it (a :class:`~sbxtrace.errors.SandboxError` otherwise).
"""
from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

from ._client import Client, get_client, run_async
from ._session import Session
from .errors import SandboxError, SessionNotFound
from .results import ExecutionResult, InstallResult, ListResult, ReadResult, WriteResult

_PRESET = {"python": "python", "javascript": "node", "shell": "standard"}


class SandboxManager:
    """Seed 003's manager. Every method is a coroutine; blocking twins end in ``_sync``.

    ``default_max_memory_mb`` is the memory limit each session is created with (the
    seed's 512): ``code_execute`` has no per-call limits, so ``execute_code`` accepts
    ``max_memory_mb`` equal to the session's and raises :class:`NotImplementedError`
    for another value.

    Each ``execute_code`` runs its code as a fresh process, as the seed injects a script
    into the workspace and runs it: files persist between executions, variables do not.
    ``stateful=True`` runs them in the session's interpreter context instead (variables
    and imports persist; the result's ``results`` has a final expression's value).
    """

    def __init__(self, client: Optional[Client] = None, *, url: Optional[str] = None,
                 token: Optional[str] = None, data_dir: Optional[str] = None,
                 default_max_memory_mb: int = 512, default_timeout_s: int = 30,
                 stateful: bool = False) -> None:
        self.client = client or get_client(url=url, token=token, data_dir=data_dir)
        self.stateful = stateful
        self.default_max_memory_mb = default_max_memory_mb
        self.default_timeout_s = default_timeout_s
        self._sessions: Dict[str, Session] = {}
        self._languages: Dict[str, str] = {}
        self._lock = threading.Lock()

    def _get(self, sandbox_id: str) -> Session:
        with self._lock:
            s = self._sessions.get(sandbox_id)
        if s is None:
            if sandbox_id.startswith("sbx_"):  # a session made elsewhere: attach
                s = Session(self.client, session_id=sandbox_id)
                with self._lock:
                    self._sessions[sandbox_id] = s
            else:
                raise SessionNotFound(f"unknown sandbox {sandbox_id!r}")
        return s

    def create_sandbox_sync(self, language: str, sandbox_id: Optional[str] = None,
                            network_enabled: bool = False,
                            allowed_domains: Optional[List[str]] = None) -> str:
        """``code_create_sandbox`` for ``language`` (``python``, ``javascript``,
        ``shell``); returns ``sandbox_id`` or the server's id."""
        if language not in _PRESET:
            raise ValueError(f"language {language!r}: python, javascript or shell")
        net: Dict[str, Any] = {"mode": "none"}
        if network_enabled:
            net = ({"mode": "allowlist", "allowed_domains": list(allowed_domains)}
                   if allowed_domains else {"mode": "full"})
        with self._lock:
            if sandbox_id is not None and sandbox_id in self._sessions:
                raise SandboxError(f"sandbox {sandbox_id!r} already exists")
        s = Session(self.client, policy=_PRESET[language], language=language, network=net,
                    limits={"wall_s": max(self.default_timeout_s, 1),
                            "memory_mb": self.default_max_memory_mb})
        sid = s.id
        key = sandbox_id or sid
        with self._lock:
            self._sessions[key] = s
            self._languages[key] = language
        return key

    def execute_code_sync(self, sandbox_id: str, code: str, timeout: int = 30,
                          max_memory_mb: int = 512) -> ExecutionResult:
        """``code_execute`` in the sandbox's language."""
        s = self._get(sandbox_id)
        have = (s.info.get("limits") or {}).get("memory_mb")
        if max_memory_mb is not None and have is not None and int(max_memory_mb) != int(have):
            raise NotImplementedError(
                f"max_memory_mb={max_memory_mb}: code_execute has no per-execution limits; "
                f"this session's memory limit is {have} MiB, fixed at code_create_sandbox "
                "(SandboxManager(default_max_memory_mb=...))")
        lang = self._languages.get(sandbox_id) or s.info.get("language") or "python"
        return s.execute(code, lang, timeout=timeout, fresh=not self.stateful)

    def install_package_sync(self, sandbox_id: str, package: str,
                             registry: str = "pypi") -> InstallResult:
        """``code_install_package`` when the server offers it; otherwise
        :class:`NotImplementedError`."""
        s = self._get(sandbox_id)
        if "code_install_package" not in self.client.tools():
            raise NotImplementedError(
                "install_package: sbxtrace mcp has no code_install_package tool yet (issue "
                "17: installs through the operator's registry with the network opened for "
                "the install alone)")
        manager = {"pypi": "pip", "npm": "npm"}.get(registry, registry)
        r, is_error = self.client.call_tool(
            "code_install_package", {"session_id": s.id, "manager": manager,
                                     "packages": [package]}, error_is_result=True)
        return InstallResult(success=not is_error, package=package,
                             stdout=str(r.get("stdout", "")), stderr=str(r.get("stderr", "")),
                             meta=r)

    def write_file_sync(self, sandbox_id: str, file_path: str, content: str) -> WriteResult:
        """``code_write_file`` (``bytes`` content is sent as base64)."""
        return self._get(sandbox_id).write(file_path, content)

    def read_file_sync(self, sandbox_id: str, file_path: str) -> ReadResult:
        """``code_read_file``."""
        return self._get(sandbox_id).read(file_path)

    def list_files_sync(self, sandbox_id: str, path: str = "/workspace") -> ListResult:
        """``code_list_files`` (``files``: names, directories with a trailing ``/``)."""
        return self._get(sandbox_id).list(path)

    def destroy_sandbox_sync(self, sandbox_id: str) -> None:
        """``code_destroy_sandbox``."""
        s = self._get(sandbox_id)
        s.destroy()
        with self._lock:
            self._sessions.pop(sandbox_id, None)
            self._languages.pop(sandbox_id, None)

    def session_id(self, sandbox_id: str) -> str:
        """The server's ``sbx_…`` id of ``sandbox_id``."""
        return self._get(sandbox_id).id

    async def create_sandbox(self, language: str, sandbox_id: Optional[str] = None,
                             network_enabled: bool = False,
                             allowed_domains: Optional[List[str]] = None) -> str:
        """See :meth:`create_sandbox_sync`."""
        return await run_async(self.create_sandbox_sync, language, sandbox_id,
                               network_enabled, allowed_domains)

    async def execute_code(self, sandbox_id: str, code: str, timeout: int = 30,
                           max_memory_mb: int = 512) -> ExecutionResult:
        """See :meth:`execute_code_sync`."""
        return await run_async(self.execute_code_sync, sandbox_id, code, timeout,
                               max_memory_mb)

    async def install_package(self, sandbox_id: str, package: str,
                              registry: str = "pypi") -> InstallResult:
        """See :meth:`install_package_sync`."""
        return await run_async(self.install_package_sync, sandbox_id, package, registry)

    async def write_file(self, sandbox_id: str, file_path: str, content: str) -> WriteResult:
        """See :meth:`write_file_sync`."""
        return await run_async(self.write_file_sync, sandbox_id, file_path, content)

    async def read_file(self, sandbox_id: str, file_path: str) -> ReadResult:
        """See :meth:`read_file_sync`."""
        return await run_async(self.read_file_sync, sandbox_id, file_path)

    async def list_files(self, sandbox_id: str, path: str = "/workspace") -> ListResult:
        """See :meth:`list_files_sync`."""
        return await run_async(self.list_files_sync, sandbox_id, path)

    async def destroy_sandbox(self, sandbox_id: str) -> None:
        """See :meth:`destroy_sandbox_sync`."""
        await run_async(self.destroy_sandbox_sync, sandbox_id)
