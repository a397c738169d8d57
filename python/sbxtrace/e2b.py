"""An E2B-shaped facade, for code written against the hosted service's Python SDK
(``from e2b_code_interpreter import Sandbox``): change the import to
``from sbxtrace.e2b import Sandbox``.

* ``run_code`` runs in the session's stateful interpreter context for the language (or in a
  context from :meth:`Sandbox.create_code_context`): variables, imports and a shell's cwd
  persist between calls. ``results`` holds the value of a final expression and matplotlib
  figures (:class:`Result` with ``text`` and ``png``); ``error`` is the exception the
  interpreter reported. ``on_stdout``/``on_stderr`` are fed live from the server's progress
  notifications.
* ``commands.run`` runs a process of its own (``code_run_command``); ``background=True``
  returns a :class:`CommandHandle` (``wait``, ``kill``, ``send_stdin``) and callbacks are fed
  while it runs (``code_process`` output, polled).
* ``set_timeout`` and ``pause`` raise :class:`NotImplementedError`; docs/python.md lists the
  other differences.
"""
from __future__ import annotations

import json
import shlex
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from ._client import Client, get_client
from ._session import Session, ws_path
from .errors import SandboxError, SandboxTimeout
from .results import ExecutionResult

__all__ = ["Sandbox", "Execution", "Logs", "ExecutionError", "Result", "OutputMessage",
           "Context", "CommandResult", "CommandHandle", "CommandExitException", "ProcessInfo",
           "EntryInfo", "TimeoutException"]

TimeoutException = SandboxTimeout

_LANGS = {"python": "python", "py": "python", "python3": "python", "javascript": "javascript",
          "js": "javascript", "node": "javascript", "bash": "shell", "sh": "shell",
          "shell": "shell"}


def _language(language: str) -> str:
    lang = _LANGS.get(language.lower())
    if lang is None:
        raise ValueError(f"language {language!r}: python, javascript or bash")
    return lang


class OutputMessage(str):
    """A chunk of output given to ``run_code``'s ``on_stdout``/``on_stderr``: a ``str`` (so
    callbacks written for plain strings work) with E2B's ``line``, ``timestamp`` (ns) and
    ``error`` (whether it came from stderr)."""

    timestamp: int
    error: bool

    def __new__(cls, line: str, timestamp: Optional[int] = None,
                error: bool = False) -> "OutputMessage":
        self = super().__new__(cls, line)
        self.timestamp = timestamp if timestamp is not None else time.time_ns()
        self.error = error
        return self

    @property
    def line(self) -> str:
        """The text."""
        return str(self)


@dataclass
class Logs:
    """The output of a cell, as lists of chunks (as they came, when streamed)."""

    stdout: List[str] = field(default_factory=list)
    stderr: List[str] = field(default_factory=list)


@dataclass
class ExecutionError:
    """A cell's error: exception ``name``, ``value`` (its message) and ``traceback``."""

    name: str
    value: str
    traceback: str


_MIME = {"text/plain": "text", "text/html": "html", "text/markdown": "markdown",
         "image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpeg",
         "application/pdf": "pdf", "text/latex": "latex", "application/json": "json",
         "application/javascript": "javascript"}


class Result:
    """One result of a cell, as E2B's: ``text`` (the repr of a final expression, or
    ``<Figure N>``), ``png`` (base64, for a figure), the other formats when present
    (``html``, ``markdown``, ``svg``, ``jpeg``, ``pdf``, ``latex``, ``json``,
    ``javascript``), ``extra`` (unknown MIME types), ``is_main_result`` (the final
    expression's value, not a figure) and ``raw`` (the server's dict)."""

    def __init__(self, raw: Dict[str, Any], is_main_result: bool = False) -> None:
        self.raw = dict(raw)
        self.is_main_result = is_main_result
        self.text: Optional[str] = None
        self.html: Optional[str] = None
        self.markdown: Optional[str] = None
        self.svg: Optional[str] = None
        self.png: Optional[str] = None
        self.jpeg: Optional[str] = None
        self.pdf: Optional[str] = None
        self.latex: Optional[str] = None
        self.json: Optional[Any] = None
        self.javascript: Optional[str] = None
        self.data: Optional[Any] = None
        self.chart: Optional[Any] = None
        self.extra: Dict[str, Any] = {}
        for mime, value in raw.items():
            if mime in _MIME:
                setattr(self, _MIME[mime], value)
            else:
                self.extra[mime] = value

    def formats(self) -> List[str]:
        """The formats this result has (``text``, ``png``, …)."""
        return [_MIME[m] for m in self.raw if m in _MIME] + list(self.extra)

    def __str__(self) -> str:
        return self.text or ""

    def __repr__(self) -> str:
        return f"Result({', '.join(self.formats())}: {(self.text or '')[:60]!r})"


@dataclass
class Execution:
    """The outcome of :meth:`Sandbox.run_code`."""

    logs: Logs = field(default_factory=Logs)
    results: List[Result] = field(default_factory=list)
    error: Optional[ExecutionError] = None
    execution_count: Optional[int] = None
    raw: Optional[ExecutionResult] = None

    @property
    def text(self) -> Optional[str]:
        """The main result's text (the value of the cell's final expression), if any."""
        for r in self.results:
            if r.is_main_result:
                return r.text
        return None


@dataclass
class Context:
    """A code context (E2B's): its ``id`` (the server's ``context_id``), ``language`` and
    ``cwd``."""

    id: str
    language: str = "python"
    cwd: str = "/workspace"


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
                         f"{result.stderr.strip()[-500:]}", tool="code_run_command")
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.exit_code = result.exit_code
        self.error = result.error


@dataclass
class ProcessInfo:
    """A background process, as :meth:`Commands.list` gives it."""

    pid: str
    cmd: str
    running: bool
    exit_code: Optional[int] = None


@dataclass
class EntryInfo:
    """A listing entry."""

    name: str
    path: str
    type: str
    size: int = 0


def _call(cb: Optional[Callable[[Any], Any]], text: Any) -> None:
    if cb and text:
        cb(text)


def _check_env_names(envs: Dict[str, str]) -> None:
    for k in envs:
        if not (k.isidentifier() and k.isascii()):
            raise ValueError(f"environment variable name {k!r}: letters, digits and '_'")


def _env_cells(lang: str, envs: Dict[str, str], save: List[str],
               reset: Dict[str, str]) -> Tuple[str, str]:
    """Two cells for an interpreter context: one that saves the variables ``save`` and sets
    ``envs``, one that puts the saved ones back and sets ``reset`` (a cell's own ``envs``
    over the sandbox's ``envs``)."""
    if lang == "python":
        setup = (f"globals()['__sbxtrace_env_saved'] = {{k: __import__('os').environ.get(k) "
                 f"for k in {save!r}}}\n__import__('os').environ.update({envs!r})\nNone")
        restore = ("for __sbxtrace_k, __sbxtrace_v in globals().pop('__sbxtrace_env_saved', "
                   "{}).items():\n"
                   "    if __sbxtrace_v is None: __import__('os').environ.pop(__sbxtrace_k, None)\n"
                   "    else: __import__('os').environ[__sbxtrace_k] = __sbxtrace_v\n"
                   f"__import__('os').environ.update({reset!r})\n"
                   "globals().pop('__sbxtrace_k', None); globals().pop('__sbxtrace_v', None)\n"
                   "None")
        return setup, restore
    if lang == "javascript":
        setup = (f"globalThis.__sbxtraceEnvSaved = Object.fromEntries({json.dumps(save)}"
                 f".map((k) => [k, process.env[k]])); Object.assign(process.env, "
                 f"{json.dumps(envs)}); undefined")
        restore = ("(() => { const s = globalThis.__sbxtraceEnvSaved || {}; "
                   "delete globalThis.__sbxtraceEnvSaved; "
                   "for (const [k, v] of Object.entries(s)) { if (v === undefined) "
                   "delete process.env[k]; else process.env[k] = v; } "
                   f"Object.assign(process.env, {json.dumps(reset)}); }})(); undefined")
        return setup, restore
    _check_env_names(envs)
    setup = "".join(f"__sbx_had_{k}=${{{k}+x}}; __sbx_old_{k}=${{{k}-}}; " for k in save) + \
        "".join(f"export {k}={shlex.quote(v)}; " for k, v in envs.items()) + "true"
    restore = "".join(f'if [ -n "${{__sbx_had_{k}-}}" ]; then export {k}="$__sbx_old_{k}"; '
                      f"else unset {k}; fi; unset __sbx_had_{k} __sbx_old_{k}; "
                      for k in save) + \
        "".join(f"export {k}={shlex.quote(v)}; " for k, v in reset.items()) + "true"
    return setup, restore


class CommandHandle:
    """A background command (E2B's ``CommandHandle``): ``pid`` (the server's process id),
    ``stdout``/``stderr`` so far, ``exit_code`` (``None`` while it runs), :meth:`wait`,
    :meth:`kill`, :meth:`send_stdin`, :meth:`close_stdin`, :meth:`disconnect`, and
    iteration over ``(stdout, stderr, None)`` chunks as they come.

    With ``on_stdout``/``on_stderr``, a thread polls the process's output
    (``code_process output`` with offsets, every ``poll_interval`` seconds) and calls them
    as it arrives; :meth:`wait` returns when the process has ended and every chunk was
    given."""

    def __init__(self, session: Session, process_id: str, *, os_pid: Optional[int] = None,
                 command: str = "", on_stdout: Optional[Callable[[str], Any]] = None,
                 on_stderr: Optional[Callable[[str], Any]] = None,
                 poll_interval: float = 0.2) -> None:
        self._s = session
        self.pid = process_id
        self.os_pid = os_pid
        self.command = command
        self.poll_interval = poll_interval
        self._on_stdout = on_stdout
        self._on_stderr = on_stderr
        self._out: List[str] = []
        self._err: List[str] = []
        self._since = [0, 0]
        self._final: Optional[Dict[str, Any]] = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._pump_error: Optional[BaseException] = None
        if on_stdout or on_stderr:
            self._start_pump()

    # -- state ---------------------------------------------------------------------------
    @property
    def stdout(self) -> str:
        """The standard output read so far."""
        return "".join(self._out)

    @property
    def stderr(self) -> str:
        """The standard error read so far."""
        return "".join(self._err)

    @property
    def exit_code(self) -> Optional[int]:
        """The exit status, ``None`` while the process runs (or before it was seen end)."""
        return None if self._final is None else int(self._final.get("exit_code") or 0)

    @property
    def error(self) -> Optional[str]:
        """The last line of stderr of a command that failed."""
        if not self.exit_code:
            return None
        lines = self.stderr.strip().splitlines()
        return lines[-1] if lines else None

    # -- polling -------------------------------------------------------------------------
    def _poll(self, action: str = "output", timeout: Optional[int] = None) -> None:
        with self._lock:
            if self._final is not None:
                return
            s = self._s.process(action, self.pid, since_stdout=self._since[0],
                                since_stderr=self._since[1], timeout=timeout)
            out, err = str(s.get("stdout") or ""), str(s.get("stderr") or "")
            self._since = [int(s.get("next_stdout", self._since[0])),
                           int(s.get("next_stderr", self._since[1]))]
            if out:
                self._out.append(out)
                _call(self._on_stdout, out)
            if err:
                self._err.append(err)
                _call(self._on_stderr, err)
            if not s.get("running", True):
                self._final = s

    def _pump(self) -> None:
        try:
            while self._final is None and not self._stop.is_set():
                self._poll("output")
                if self._final is None:
                    self._stop.wait(self.poll_interval)
        except BaseException as e:  # reported by wait()
            self._pump_error = e

    def _start_pump(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._pump, daemon=True,
                                            name=f"sbxtrace-e2b-{self.pid}")
            self._thread.start()

    def __iter__(self) -> Iterator[Tuple[Optional[str], Optional[str], None]]:
        """``(stdout, stderr, None)`` chunks as they come, until the process ends."""
        while True:
            n_out, n_err = len(self._out), len(self._err)
            if self._thread is None:
                self._poll("output")
            for chunk in self._out[n_out:]:
                yield chunk, None, None
            for chunk in self._err[n_err:]:
                yield None, chunk, None
            if self._final is not None:
                return
            time.sleep(self.poll_interval)

    def wait(self, on_pty: Any = None, on_stdout: Optional[Callable[[str], Any]] = None,
             on_stderr: Optional[Callable[[str], Any]] = None) -> CommandResult:
        """Wait for the end; raises :class:`CommandExitException` on a non-zero exit and
        :class:`TimeoutException` when the command's ``timeout`` ended it."""
        if on_stdout or on_stderr:
            with self._lock:
                self._on_stdout = on_stdout or self._on_stdout
                self._on_stderr = on_stderr or self._on_stderr
            if self._final is None:
                self._start_pump()
        if self._thread is not None:
            while self._thread.is_alive():
                self._thread.join(0.5)
            if self._pump_error is not None:
                err, self._pump_error = self._pump_error, None
                raise err
        while self._final is None:
            self._poll("wait", timeout=30)
        final = self._final
        res = CommandResult(stdout=self.stdout, stderr=self.stderr, exit_code=self.exit_code or 0)
        if final.get("timed_out"):
            raise TimeoutException(f"command timed out after "
                                   f"{float(final.get('duration_ms') or 0) / 1000:.1f} s",
                                   tool="code_run_command", result=final)
        if res.exit_code != 0:
            res.error = self.error
            raise CommandExitException(res)
        return res

    # -- control -------------------------------------------------------------------------
    def kill(self) -> bool:
        """Kill the process (SIGKILL); ``False`` if it had already ended."""
        try:
            s = self._s.process("kill", self.pid, signal="KILL")
        except SandboxError:
            return False
        return bool(s.get("running", True)) or self._final is None

    def send_stdin(self, data: str) -> None:
        """Write ``data`` to the process's standard input."""
        self._s.process("write_stdin", self.pid, data=data)

    def close_stdin(self) -> None:
        """Close the process's standard input (end of file)."""
        self._s.process("write_stdin", self.pid, eof=True)

    def disconnect(self) -> None:
        """Stop following the process (it keeps running; :meth:`Commands.connect`)."""
        self._stop.set()


class Commands:
    """``sandbox.commands``."""

    def __init__(self, session: Session, envs: Optional[Dict[str, str]] = None) -> None:
        self._s = session
        self._envs = envs if envs is not None else {}

    def run(self, cmd: str, background: bool = False, envs: Optional[Dict[str, str]] = None,
            user: Optional[str] = None, cwd: Optional[str] = None,
            on_stdout: Optional[Callable[[str], Any]] = None,
            on_stderr: Optional[Callable[[str], Any]] = None,
            stdin: Union[bool, str, None] = None, timeout: Optional[float] = None,
            **_: Any) -> Union[CommandResult, CommandHandle]:
        """Run a shell command line as a process of its own (``code_run_command``), in
        ``cwd`` (default ``/workspace``) with the sandbox's and ``envs``' variables.
        ``timeout`` defaults to the session's wall-clock limit (not E2B's 60 s, which the
        default preset's 30 s would refuse) and is also a background command's limit.

        In the foreground it returns a :class:`CommandResult`, raising
        :class:`CommandExitException` on a non-zero exit and :class:`TimeoutException` on a
        timeout, as E2B does; ``on_stdout``/``on_stderr`` are then called as the output
        comes (the command runs as a followed background process). ``background=True``
        returns a :class:`CommandHandle` at once. ``stdin``: a string is written to the
        command's standard input (E2B's boolean is accepted and ignored). ``user`` is
        ignored: the sandbox has one user."""
        env = {**self._envs, **(envs or {})}
        data = stdin if isinstance(stdin, str) else None
        if not background and not (on_stdout or on_stderr):
            s = self._s.run_command(cmd, cwd=cwd, env=env or None, stdin=data, timeout=timeout)
            return _command_result(s)
        handle = self._start(cmd, env, cwd, data, timeout, on_stdout, on_stderr)
        return handle if background else handle.wait()

    def _start(self, cmd: str, env: Dict[str, str], cwd: Optional[str], stdin: Optional[str],
               timeout: Optional[float], on_stdout: Optional[Callable[[str], Any]],
               on_stderr: Optional[Callable[[str], Any]]) -> CommandHandle:
        _check_env_names(env)
        # the server takes no env with background yet: the variables are exported first
        line = "".join(f"export {k}={shlex.quote(v)}; " for k, v in env.items()) + cmd
        s = self._s.run_command(line, cwd=cwd, stdin=stdin, timeout=timeout, background=True)
        return CommandHandle(self._s, str(s["process_id"]), os_pid=s.get("pid"), command=cmd,
                             on_stdout=on_stdout, on_stderr=on_stderr)

    def list(self) -> List[ProcessInfo]:
        """The session's background processes (running or not yet collected)."""
        s = self._s.process("list")
        return [ProcessInfo(pid=str(p.get("process_id")), cmd=str(p.get("command", "")),
                            running=bool(p.get("running")), exit_code=p.get("exit_code"))
                for p in s.get("processes", [])]

    def kill(self, pid: str) -> bool:
        """Kill a background process (SIGKILL); ``False`` if there is none by that id."""
        try:
            self._s.process("kill", pid, signal="KILL")
            return True
        except SandboxError:
            return False

    def send_stdin(self, pid: str, data: str) -> None:
        """Write ``data`` to a background process's standard input."""
        self._s.process("write_stdin", pid, data=data)

    def connect(self, pid: str, on_stdout: Optional[Callable[[str], Any]] = None,
                on_stderr: Optional[Callable[[str], Any]] = None) -> CommandHandle:
        """A handle on a background process started earlier (its output from the start)."""
        return CommandHandle(self._s, pid, on_stdout=on_stdout, on_stderr=on_stderr)


def _command_result(s: Dict[str, Any]) -> CommandResult:
    res = CommandResult(stdout=str(s.get("stdout", "")), stderr=str(s.get("stderr", "")),
                        exit_code=int(s.get("exit_code") if s.get("exit_code") is not None
                                      else -1))
    if s.get("timed_out"):
        raise TimeoutException(f"command timed out after "
                               f"{float(s.get('duration_ms') or 0) / 1000:.1f} s",
                               tool="code_run_command", result=s)
    if res.exit_code != 0:
        res.error = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else None
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
    """E2B's ``Sandbox``: ``Sandbox.create()`` (or ``Sandbox()``), ``run_code``, code
    contexts, ``commands``, ``files``, ``kill``, ``with``. ``timeout`` is the idle timeout
    in seconds (E2B's sandbox lifetime). ``template`` names a server preset (default
    ``python``); ``envs`` are set for every cell and command."""

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
        self.commands = Commands(self._s, self.envs)
        self.files = Files(self._s)

    @classmethod
    def create(cls, template: Optional[str] = None, timeout: Optional[int] = 300,
               **kwargs: Any) -> "Sandbox":
        """Create a sandbox."""
        return cls(template, timeout, **kwargs)

    @classmethod
    def connect(cls, sandbox_id: str, **kwargs: Any) -> "Sandbox":
        """Attach to an existing sandbox (its files, contexts and background processes are
        there unless the server restarted)."""
        return cls(sandbox_id=sandbox_id, **kwargs)

    @property
    def sandbox_id(self) -> str:
        """The session id."""
        return self._s.id

    # -- code ----------------------------------------------------------------------------
    def run_code(self, code: str, language: Optional[str] = None,
                 context: Optional[Context] = None,
                 on_stdout: Optional[Callable[[OutputMessage], Any]] = None,
                 on_stderr: Optional[Callable[[OutputMessage], Any]] = None,
                 on_result: Optional[Callable[[Result], Any]] = None,
                 on_error: Optional[Callable[[ExecutionError], Any]] = None,
                 envs: Optional[Dict[str, str]] = None, timeout: Optional[float] = None,
                 **_: Any) -> Execution:
        """Run a cell (``python``, ``javascript``/``js``, ``bash``) in the language's
        default context, or in ``context``: its state persists. ``envs`` (and the
        sandbox's) are set in the interpreter for this cell and put back after it.
        A timeout interrupts the cell (the state survives) and gives an ``error`` named
        ``TimeoutError``."""
        if context is not None:
            if language is not None and _language(language) != _language(context.language):
                raise ValueError("give either language or context, not both")
            lang, ctx_id = _language(context.language), context.id
        else:
            lang, ctx_id = _language(language or "python"), None
        restore = None
        if self.envs or envs:
            call_envs = dict(envs or {})
            setup, restore = _env_cells(lang, {**self.envs, **call_envs},
                                        [k for k in call_envs if k not in self.envs],
                                        {k: self.envs[k] for k in call_envs if k in self.envs})
            self._s.execute(setup, lang, fresh=False, context_id=ctx_id)

        def on_output(stream: str, text: str) -> None:
            cb = on_stdout if stream == "stdout" else on_stderr
            if cb:
                cb(OutputMessage(text, error=stream == "stderr"))

        try:
            r = self._s.execute(code, lang, timeout=timeout, fresh=False, context_id=ctx_id,
                                on_output=on_output if (on_stdout or on_stderr) else None)
        finally:
            if restore is not None:
                self._s.execute(restore, lang, fresh=False, context_id=ctx_id)
        chunks = r.meta.pop("output_chunks", None)
        if chunks is not None:
            logs = Logs(stdout=list(chunks["stdout"]), stderr=list(chunks["stderr"]))
        else:
            logs = Logs(stdout=[r.stdout] if r.stdout else [],
                        stderr=[r.stderr] if r.stderr else [])
        ex = Execution(logs=logs, execution_count=r.execution_count, raw=r,
                       results=[Result(d, is_main_result="image/png" not in d)
                                for d in r.results])
        e = r.error
        if r.timed_out:
            ex.error = ExecutionError("TimeoutError",
                                      f"execution timed out after {r.duration:.1f} s",
                                      (e or {}).get("traceback", r.stderr))
        elif e:
            ex.error = ExecutionError(str(e.get("name", "Error")), str(e.get("value", "")),
                                      str(e.get("traceback", "")))
        elif r.exit_code != 0:
            why = f"exit status {r.exit_code}"
            if r.meta.get("killed_by"):
                why += f" (killed by {r.meta['killed_by']})"
            ex.error = ExecutionError("Error", "; ".join([why] + r.notices), r.stderr)
        for res in ex.results:
            _call(on_result, res)
        if ex.error is not None:
            _call(on_error, ex.error)
        return ex

    def create_code_context(self, cwd: Optional[str] = None, language: Optional[str] = None,
                            **_: Any) -> Context:
        """A new interpreter context (its own state, separate from the default one) for
        ``language`` (default ``python``), started now, in ``cwd`` (default
        ``/workspace``)."""
        ctx = Context(id="ctx-" + uuid.uuid4().hex[:16], language=language or "python",
                      cwd=ws_path(cwd) if cwd else "/workspace")
        self._start_context(ctx)
        return ctx

    def _start_context(self, ctx: Context) -> None:
        lang = _language(ctx.language)
        code = {"python": f"__import__('os').chdir({ctx.cwd!r})\nNone",
                "javascript": f"process.chdir({json.dumps(ctx.cwd)}); undefined",
                "shell": f"cd {shlex.quote(ctx.cwd)}"}[lang]
        r = self._s.execute(code, lang, fresh=False, context_id=ctx.id)
        if r.exit_code != 0:
            raise SandboxError(f"cannot start a {ctx.language} context in {ctx.cwd}: "
                               f"{r.stderr.strip()[-300:]}", tool="code_execute",
                               result=r.meta)

    def list_code_contexts(self) -> List[Context]:
        """The session's interpreter contexts (the server's list: ``default`` ones too)."""
        info = self._s.sandbox_info()
        back = {"python": "python", "javascript": "javascript", "shell": "bash"}
        return [Context(id=str(c.get("context_id")),
                        language=back.get(str(c.get("language")), str(c.get("language"))))
                for c in info.get("contexts") or []]

    def restart_code_context(self, context: Union[Context, str, None] = None) -> None:
        """Empty a context's state (``code_reset_context``); its cwd is set again."""
        if context is None or isinstance(context, str):  # every language's, by id
            self._s.reset_context(None, context or "default")
            return
        self._s.reset_context(_language(context.language), context.id)
        if context.id != "default" or context.cwd != "/workspace":
            self._start_context(context)

    def remove_code_context(self, context: Union[Context, str]) -> None:
        """Drop a context and its interpreter (``code_reset_context``)."""
        if isinstance(context, str):
            self._s.reset_context(None, context)
        else:
            self._s.reset_context(_language(context.language), context.id)

    # -- the sandbox ---------------------------------------------------------------------
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
