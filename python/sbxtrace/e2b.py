"""An E2B-shaped facade, for code written against the hosted service's Python SDK
(``from e2b_code_interpreter import Sandbox``): change the import to
``from sbxtrace.e2b import Sandbox``.

What differs, because ``sbxtrace mcp`` does not have it yet (issue 17):

* ``run_code`` runs each cell in a fresh interpreter: variables do not persist between
  calls (files in ``/workspace`` do), and ``results`` is empty (no value of a final
  expression, no images). ``error`` is parsed from the Python traceback.
* ``on_stdout``/``on_stderr`` are called once with the whole output after the run, not
  streamed.
* ``commands.run(background=True)``, ``run_code(context=...)``, ``create_code_context``,
  ``set_timeout`` and ``pause`` raise :class:`NotImplementedError`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from ._client import Client, get_client
from ._session import Session
from .errors import SandboxError, SandboxTimeout
from .results import ExecutionResult

__all__ = ["Sandbox", "Execution", "Logs", "ExecutionError", "CommandResult",
           "CommandExitException", "EntryInfo", "TimeoutException"]

TimeoutException = SandboxTimeout


@dataclass
class Logs:
    """The output of a cell, as lists of chunks."""

    stdout: List[str] = field(default_factory=list)
    stderr: List[str] = field(default_factory=list)


@dataclass
class ExecutionError:
    """A cell's error: exception ``name``, ``value`` (its message) and ``traceback``."""

    name: str
    value: str
    traceback: str


@dataclass
class Execution:
    """The outcome of :meth:`Sandbox.run_code`."""

    logs: Logs = field(default_factory=Logs)
    results: List[Any] = field(default_factory=list)
    error: Optional[ExecutionError] = None
    execution_count: Optional[int] = None
    raw: Optional[ExecutionResult] = None

    @property
    def text(self) -> Optional[str]:
        """The main result's text (always ``None`` here: no final-expression values)."""
        return None


@dataclass
class CommandResult:
    """The outcome of :meth:`Commands.run`."""

    stdout: str
    stderr: str
    exit_code: int
    error: Optional[str] = None


class CommandExitException(SandboxError):
    """A command exited non-zero (E2B raises rather than returns)."""

    def __init__(self, result: CommandResult) -> None:
        super().__init__(f"command exited with status {result.exit_code}: "
                         f"{result.stderr.strip()[-500:]}", tool="code_execute")
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.exit_code = result.exit_code
        self.error = result.error


@dataclass
class EntryInfo:
    """A listing entry."""

    name: str
    path: str
    type: str
    size: int = 0


_TB_LAST = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")


def _python_error(stderr: str) -> Optional[ExecutionError]:
    if "Traceback (most recent call last)" not in stderr and "SyntaxError" not in stderr:
        return None
    lines = [ln for ln in stderr.rstrip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        m = _TB_LAST.match(ln.strip())
        if m and (m.group(1).endswith(("Error", "Exception", "Interrupt", "Exit"))
                  or m.group(1) in ("StopIteration", "Warning")):
            return ExecutionError(name=m.group(1).rsplit(".", 1)[-1],
                                  value=m.group(2) or "", traceback=stderr)
    return ExecutionError(name="Error", value=lines[-1] if lines else "", traceback=stderr)


def _call(cb: Optional[Callable[[Any], Any]], text: str) -> None:
    if cb and text:
        cb(text)


class Commands:
    """``sandbox.commands``."""

    def __init__(self, session: Session) -> None:
        self._s = session

    def run(self, cmd: str, background: bool = False, envs: Optional[Dict[str, str]] = None,
            cwd: Optional[str] = None, on_stdout: Optional[Callable[[str], Any]] = None,
            on_stderr: Optional[Callable[[str], Any]] = None,
            timeout: Optional[float] = None, **_: Any) -> CommandResult:
        """Run a shell command (``timeout`` defaults to the session's wall-clock limit,
        not E2B's 60 s, which the default preset's 30 s would refuse). Raises :class:`CommandExitException` on a non-zero exit and
        :class:`TimeoutException` on a timeout, as E2B does."""
        if background:
            raise NotImplementedError("commands.run(background=True): sbxtrace mcp has no "
                                      "background processes yet (issue 17)")
        if cwd:
            import shlex
            cmd = f"cd {shlex.quote(cwd)} && {cmd}"
        r = self._s.execute(cmd, "shell", timeout=timeout, env=envs)
        _call(on_stdout, r.stdout)
        _call(on_stderr, r.stderr)
        if r.timed_out:
            raise TimeoutException(f"command timed out after {r.duration:.1f} s",
                                   tool="code_execute", result=r.meta)
        res = CommandResult(stdout=r.stdout, stderr=r.stderr, exit_code=r.exit_code)
        if r.exit_code != 0:
            res.error = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else None
            raise CommandExitException(res)
        return res


class Files:
    """``sandbox.files``."""

    def __init__(self, session: Session) -> None:
        self._s = session

    def write(self, path: str, data: Union[str, bytes]) -> EntryInfo:
        """Write a file (text or bytes)."""
        w = self._s.write(path, data)
        return EntryInfo(name=w.path.rsplit("/", 1)[-1], path=w.path, type="file",
                         size=w.bytes)

    def read(self, path: str, format: str = "text") -> Union[str, bytes]:
        """Read a file: ``format="text"`` (default) or ``"bytes"``."""
        data = self._s.read_bytes(path)
        return data if format == "bytes" else data.decode("utf-8", "replace")

    def list(self, path: str = "/workspace") -> List[EntryInfo]:
        """The entries of a directory (not recursive)."""
        return [EntryInfo(name=e.name, path=e.path,
                          type="dir" if e.type == "directory" else e.type, size=e.size)
                for e in self._s.list(path).entries]

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists."""
        import posixpath
        parent, name = posixpath.split(path.rstrip("/") or "/")
        try:
            return any(e.name == name for e in self._s.list(parent or "/workspace").entries)
        except SandboxError:
            return False


class Sandbox:
    """E2B's ``Sandbox``: ``Sandbox.create()`` (or ``Sandbox()``), ``run_code``,
    ``commands``, ``files``, ``kill``, ``with``. ``timeout`` is the idle timeout in
    seconds (E2B's sandbox lifetime). ``template`` names a server preset."""

    def __init__(self, template: Optional[str] = None, timeout: Optional[int] = 300,
                 envs: Optional[Dict[str, str]] = None, *, sandbox_id: Optional[str] = None,
                 client: Optional[Client] = None, url: Optional[str] = None,
                 api_key: Optional[str] = None, data_dir: Optional[str] = None,
                 **_: Any) -> None:
        client = client or get_client(url=url, token=api_key, data_dir=data_dir)
        self._s = Session(client, session_id=sandbox_id, policy=template or "python",
                          idle_timeout_s=timeout)
        _ = self._s.id
        self.envs = dict(envs or {})
        self.commands = Commands(self._s)
        self.files = Files(self._s)
        self._count = 0

    @classmethod
    def create(cls, template: Optional[str] = None, timeout: Optional[int] = 300,
               **kwargs: Any) -> "Sandbox":
        """Create a sandbox."""
        return cls(template, timeout, **kwargs)

    @classmethod
    def connect(cls, sandbox_id: str, **kwargs: Any) -> "Sandbox":
        """Attach to an existing sandbox (its files are there; processes are not kept)."""
        return cls(sandbox_id=sandbox_id, **kwargs)

    @property
    def sandbox_id(self) -> str:
        """The session id."""
        return self._s.id

    def run_code(self, code: str, language: str = "python",
                 on_stdout: Optional[Callable[[Any], Any]] = None,
                 on_stderr: Optional[Callable[[Any], Any]] = None,
                 envs: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
                 context: Any = None, **_: Any) -> Execution:
        """Run a cell (``python``, ``javascript``/``js``, ``bash``/``shell``). Stateless:
        see the module's notes."""
        if context is not None:
            raise NotImplementedError("run_code(context=...): stateful code contexts are "
                                      "not in sbxtrace mcp yet (issue 17)")
        lang = {"python": "python", "py": "python", "javascript": "javascript",
                "js": "javascript", "bash": "shell", "sh": "shell",
                "shell": "shell"}.get(language.lower())
        if lang is None:
            raise ValueError(f"language {language!r}: python, javascript or bash")
        r = self._s.execute(code, lang, timeout=timeout, env={**self.envs, **(envs or {})})
        self._count += 1
        _call(on_stdout, r.stdout)
        _call(on_stderr, r.stderr)
        ex = Execution(logs=Logs(stdout=[r.stdout] if r.stdout else [],
                                 stderr=[r.stderr] if r.stderr else []),
                       execution_count=self._count, raw=r)
        if r.timed_out:
            ex.error = ExecutionError("TimeoutError",
                                      f"execution timed out after {r.duration:.1f} s", "")
        elif r.exit_code != 0:
            ex.error = (_python_error(r.stderr) if lang == "python" else None) or \
                ExecutionError("Error", f"exit status {r.exit_code}", r.stderr)
        return ex

    def create_code_context(self, *a: Any, **k: Any) -> Any:
        """Not available: see the module's notes."""
        raise NotImplementedError("create_code_context: stateful code contexts are not in "
                                  "sbxtrace mcp yet (issue 17)")

    def set_timeout(self, timeout: int) -> None:
        """Not available: a session's idle timeout is fixed at creation."""
        raise NotImplementedError("set_timeout: sbxtrace mcp fixes a session's idle timeout "
                                  "at code_create_sandbox")

    def is_running(self) -> bool:
        """Whether the session still exists."""
        try:
            self._s.sandbox_info()
            return True
        except SandboxError:
            return False

    def get_info(self) -> Dict[str, Any]:
        """``code_sandbox_info``."""
        return self._s.sandbox_info()

    def kill(self) -> bool:
        """Destroy the sandbox and its files."""
        return self._s.destroy()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()
