"""Result types, shaped as the seeds' interfaces expect them.

One :class:`ExecutionResult` serves seeds 002, 003 and 004 (``exit_code`` and
``returncode``, ``duration``, ``meta``, ``ok``, ``timed_out``); one :class:`SandboxResult`
serves seed 000 (``exit_code, stdout, stderr, timed_out``) and seed 001 (``success, result,
error, execution_time_ms, memory_used_mb``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .errors import SandboxError, SandboxTimeout


@dataclass
class ExecutionResult:
    """The outcome of one execution.

    ``duration`` is in seconds. ``meta`` holds the server's whole structured result except
    the output (``truncated``, ``killed_by``, ``usage``, ``limits``, ``network_mode``,
    ``notices``, ``execution_id``, ``artifact``, ``policy``, …) plus ``runtime`` =
    ``"sbxtrace"``.
    """

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    duration: float = 0.0
    meta: Dict[str, Any] = field(default_factory=dict)
    timed_out: bool = False
    truncated: bool = False
    notices: List[str] = field(default_factory=list)

    @property
    def returncode(self) -> int:
        """Seed 004's name for ``exit_code``."""
        return self.exit_code

    @property
    def ok(self) -> bool:
        """True when the code exited 0 without timing out."""
        return self.exit_code == 0 and not self.timed_out

    @property
    def success(self) -> bool:
        """Seed 003's name for :attr:`ok`."""
        return self.ok

    @property
    def results(self) -> List[Dict[str, str]]:
        """In a stateful context: the value of a final expression and figures, as
        ``[{"text/plain": …, "image/png": base64}]`` (empty otherwise)."""
        return list(self.meta.get("results") or [])

    @property
    def error(self) -> Optional[Dict[str, str]]:
        """In a stateful context: the exception, ``{name, value, traceback}``, if any."""
        e = self.meta.get("error")
        return e if isinstance(e, dict) else None

    @property
    def execution_count(self) -> Optional[int]:
        """In a stateful context: the context's execution counter."""
        c = self.meta.get("execution_count")
        return int(c) if c is not None else None

    @property
    def network_mode(self) -> str:
        """The session's network mode after this execution (``none``, ``loopback``, …)."""
        return str(self.meta.get("network_mode", ""))

    def raise_for_status(self) -> "ExecutionResult":
        """Raise :class:`SandboxTimeout` if the code timed out, :class:`SandboxError` if it
        exited non-zero; return ``self`` otherwise."""
        if self.timed_out:
            raise SandboxTimeout(f"the code timed out after {self.duration:.1f} s"
                                 f" (killed_by={self.meta.get('killed_by')})",
                                 tool="code_execute", result=self.meta)
        if self.exit_code != 0:
            tail = self.stderr.strip().splitlines()[-1:] or [""]
            raise SandboxError(f"the code exited with status {self.exit_code}: {tail[0]}",
                               tool="code_execute", result=self.meta)
        return self

    @classmethod
    def from_structured(cls, s: Dict[str, Any]) -> "ExecutionResult":
        """Build from ``code_execute``'s ``structuredContent``."""
        meta = {k: v for k, v in s.items() if k not in ("stdout", "stderr")}
        meta["runtime"] = "sbxtrace"
        return cls(stdout=str(s.get("stdout", "")), stderr=str(s.get("stderr", "")),
                   exit_code=int(s.get("exit_code", -1) if s.get("exit_code") is not None
                                 else -1),
                   duration=float(s.get("duration_ms", 0)) / 1000.0, meta=meta,
                   timed_out=bool(s.get("timed_out")), truncated=bool(s.get("truncated")),
                   notices=list(s.get("notices") or []))


@dataclass
class SandboxResult:
    """Seed 000's result of ``Sandbox.run`` (``exit_code, stdout, stderr, timed_out``), also
    seed 001's result of ``SandboxedRunner.execute`` (``success, result, error,
    execution_time_ms, memory_used_mb``)."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    success: bool = True
    result: Any = None
    error: Optional[str] = None
    execution_time_ms: float = 0.0
    memory_used_mb: Optional[float] = None
    meta: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_execution(cls, r: ExecutionResult) -> "SandboxResult":
        """Convert an :class:`ExecutionResult`."""
        usage = r.meta.get("usage") or {}
        peak = usage.get("memory_peak")
        err = None
        if r.timed_out:
            err = f"timed out after {r.duration:.1f} s"
        elif r.exit_code != 0:
            lines = r.stderr.strip().splitlines()
            err = lines[-1] if lines else f"exit status {r.exit_code}"
            if r.meta.get("killed_by"):
                err += f" (killed by {r.meta['killed_by']})"
        return cls(exit_code=r.exit_code, stdout=r.stdout, stderr=r.stderr,
                   timed_out=r.timed_out, success=r.ok, error=err,
                   execution_time_ms=r.duration * 1000.0,
                   memory_used_mb=(peak / 2**20) if peak else None, meta=r.meta)


@dataclass
class InstallResult:
    """Seed 003's result of ``install_package``."""

    success: bool
    package: str
    stdout: str = ""
    stderr: str = ""
    meta: Dict[str, Any] = field(default_factory=dict)


@dataclass
class WriteResult:
    """Seed 003's result of ``write_file``: the path as the sandbox sees it, bytes, SHA-256."""

    success: bool
    path: str
    bytes: int = 0
    sha256: str = ""


@dataclass
class ReadResult:
    """Seed 003's result of ``read_file``. ``content`` is text, or base64 when
    ``encoding == "base64"`` (the bytes were not UTF-8); :meth:`data` gives bytes."""

    success: bool
    path: str
    content: str
    encoding: str = "utf8"
    size: int = 0
    truncated: bool = False

    def data(self) -> bytes:
        """The content as bytes."""
        import base64
        return base64.b64decode(self.content) if self.encoding == "base64" \
            else self.content.encode()


@dataclass
class FileEntry:
    """One entry of a listing."""

    path: str
    type: str
    size: int = 0
    mtime: float = 0.0
    mode: str = ""

    @property
    def name(self) -> str:
        """The last path component."""
        return self.path.rstrip("/").rsplit("/", 1)[-1]


@dataclass
class ListResult:
    """Seed 003's result of ``list_files``: ``files`` as names relative to the listed
    directory, directories with a trailing ``/``; ``entries`` with types and sizes."""

    success: bool
    path: str
    files: List[str] = field(default_factory=list)
    entries: List[FileEntry] = field(default_factory=list)
    truncated: bool = False
