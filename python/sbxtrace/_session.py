"""The synchronous core every interface is built on: one sandbox session of
``sbxtrace mcp`` (``code_create_sandbox`` … ``code_destroy_sandbox``), created lazily, plus
copying host directories into and out of its workspace through the file tools."""
from __future__ import annotations

import base64
import os
import posixpath
import shlex
import threading
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ._client import GRACE_S, Client, get_client
from .errors import SandboxError
from .results import ExecutionResult, FileEntry, ListResult, ReadResult, WriteResult

WORKSPACE = "/workspace"
#: The most a read through :meth:`Session.read_bytes` asks for.
MAX_READ = 16 * 2**20  # the server's cap for code_read_file


#: ``on_output(stream, text)``: live output of an execution, ``stream`` is ``"stdout"`` or
#: ``"stderr"``.
OutputCallback = Callable[[str, str], Any]


def split_progress(message: str) -> Tuple[str, str]:
    """The ``(stdout, stderr)`` chunks of a ``code_execute`` progress message: the server
    sends ``"stdout: …"``, ``"\nstderr: …"`` or ``"stdout: …\nstderr: …"`` (when a chunk
    itself holds ``"\nstderr: "``, the split is at its first occurrence)."""
    if message.startswith("stdout: "):
        out, sep, err = message[len("stdout: "):].partition("\nstderr: ")
        return out, err if sep else ""
    if message.startswith("\nstderr: "):
        return "", message[len("\nstderr: "):]
    return "", ""


class LiveOutput:
    """Feeds ``on_output`` from an execution's progress notifications and, when the answer
    comes, with what the notifications did not carry (the server coalesces them, at most 4
    a second, and the last output comes with the answer)."""

    def __init__(self, on_output: OutputCallback) -> None:
        self.on_output = on_output
        self.sent = {"stdout": "", "stderr": ""}
        self.chunks: Dict[str, List[str]] = {"stdout": [], "stderr": []}
        self.lost = False

    def progress(self, params: Dict[str, Any]) -> None:
        """A ``notifications/progress``'s ``params``."""
        out, err = split_progress(str(params.get("message") or ""))
        for stream, text in (("stdout", out), ("stderr", err)):
            if text:
                self.sent[stream] += text
                self.chunks[stream].append(text)
                self.on_output(stream, text)

    def finish(self, stdout: str, stderr: str) -> None:
        """The whole output from the answer: send what is left. When the notifications
        were not a prefix of it (the server sends at most 2 KiB of each stream per
        notification), ``lost`` is set and ``chunks`` become the whole output."""
        for stream, whole in (("stdout", stdout), ("stderr", stderr)):
            sent = self.sent[stream]
            if whole.startswith(sent):
                rest = whole[len(sent):]
                if rest:
                    self.chunks[stream].append(rest)
                    self.on_output(stream, rest)
            else:
                self.lost = True
                self.chunks[stream] = [whole] if whole else []


def ws_path(path: str) -> str:
    """A path as the sandbox sees it: relative paths start at ``/workspace``."""
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(WORKSPACE, path))


class Session:
    """One server session. Nothing is created until the first call that needs it.

    ``create_args`` are ``code_create_sandbox``'s arguments (``policy``, ``language``,
    ``network``, ``limits``, ``idle_timeout_s``). ``session_id`` attaches to an existing
    session instead.
    """

    def __init__(self, client: Optional[Client] = None, *, session_id: Optional[str] = None,
                 **create_args: Any) -> None:
        self.client = client or get_client()
        self.create_args = {k: v for k, v in create_args.items() if v is not None}
        self._id = session_id
        self.info: Dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def created(self) -> bool:
        """Whether the server session exists (was created or attached)."""
        return self._id is not None

    @property
    def id(self) -> str:
        """The session id (``sbx_…``), creating the session on first use."""
        if self._id is None:
            with self._lock:
                if self._id is None:
                    s, _ = self.client.call_tool("code_create_sandbox", self.create_args)
                    self.info = s
                    self._id = str(s["session_id"])
        return self._id

    def wall_s(self) -> float:
        """The session's wall-clock limit in seconds (for the client's request deadline)."""
        lim = (self.info.get("limits") or {}).get("wall_s")
        return float(lim or 600)

    def execute(self, code: str, language: str = "shell", timeout: Optional[float] = None,
                stdin: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                one_shot: bool = False, fresh: bool = True,
                context_id: Optional[str] = None,
                on_output: Optional[OutputCallback] = None) -> ExecutionResult:
        """``code_execute``: run code in the session (or in a one-shot sandbox).

        ``fresh`` (the default) runs a stateless process of its own, as every interface of
        the seeds expects; ``fresh=False`` runs in the session's interpreter context for
        ``language`` and ``context_id`` (default ``default``), whose state persists between
        calls (``stdin`` or ``env`` make the server run it fresh anyway). ``on_output``
        gets the output live (``progressToken``), then what the answer adds."""
        args: Dict[str, Any] = {"language": language, "code": code}
        if not one_shot:
            args["session_id"] = self.id
            if fresh:
                args["fresh"] = True
            elif context_id:
                args["context_id"] = context_id
        if timeout is not None:
            args["timeout"] = max(1, int(round(timeout)))
        if stdin is not None:
            args["stdin"] = stdin
        if env:
            args["env"] = dict(env)
        deadline = (timeout if timeout is not None else self.wall_s()) + GRACE_S
        live = LiveOutput(on_output) if on_output is not None else None
        s, _ = self.client.call_tool("code_execute", args, timeout=deadline,
                                     error_is_result=True,
                                     on_progress=live.progress if live else None)
        r = ExecutionResult.from_structured(s)
        if live is not None:
            live.finish(r.stdout, r.stderr)
            r.meta["output_chunks"] = live.chunks
        return r

    def reset_context(self, language: Optional[str] = None,
                      context_id: Optional[str] = None) -> int:
        """``code_reset_context``: drop interpreter contexts (all of them without
        arguments); returns how many were dropped."""
        args: Dict[str, Any] = {"session_id": self.id}
        if language:
            args["language"] = language
        if context_id:
            args["context_id"] = context_id
        s, _ = self.client.call_tool("code_reset_context", args)
        return int(s.get("reset", 0))

    def run_command(self, command: Union[str, Sequence[str]], *, cwd: Optional[str] = None,
                    env: Optional[Dict[str, str]] = None, stdin: Optional[str] = None,
                    timeout: Optional[float] = None,
                    background: bool = False) -> Dict[str, Any]:
        """``code_run_command``: ``command`` is a shell line (a string) or an argv list.
        In the foreground, returns the structured result (``stdout``, ``exit_code``,
        ``timed_out``…; a non-zero exit is a result, not an exception); with
        ``background``, ``{process_id, pid, command}`` at once (see :meth:`process`)."""
        args: Dict[str, Any] = {"session_id": self.id}
        if isinstance(command, str):
            args["command"] = command
        else:
            args["argv"] = [str(a) for a in command]
        if cwd:
            args["cwd"] = ws_path(cwd)
        if env:
            args["env"] = dict(env)
        if stdin is not None:
            args["stdin"] = stdin
        if timeout is not None:
            args["timeout"] = max(1, int(round(timeout)))
        if background:
            args["background"] = True
        deadline = (timeout if timeout is not None else self.wall_s()) + GRACE_S
        s, _ = self.client.call_tool("code_run_command", args, timeout=deadline,
                                     error_is_result=not background)
        return s

    def process(self, action: str, process_id: Optional[str] = None,
                **kwargs: Any) -> Dict[str, Any]:
        """``code_process``: ``list``, ``output`` (``since_stdout``, ``since_stderr``),
        ``wait`` (``timeout``), ``kill`` (``signal``), ``write_stdin`` (``data``, ``eof``)."""
        args: Dict[str, Any] = {"session_id": self.id, "action": action}
        if process_id is not None:
            args["process_id"] = process_id
        args.update({k: v for k, v in kwargs.items() if v is not None})
        wait = float(kwargs.get("timeout") or 30) if action == "wait" else 0.0
        s, _ = self.client.call_tool("code_process", args, timeout=wait + GRACE_S)
        return s

    def write(self, path: str, content: Any, append: bool = False) -> WriteResult:
        """``code_write_file``: text is written as UTF-8, bytes as base64."""
        args: Dict[str, Any] = {"session_id": self.id, "path": path}
        if isinstance(content, (bytes, bytearray, memoryview)):
            args["content"] = base64.b64encode(bytes(content)).decode()
            args["encoding"] = "base64"
        else:
            args["content"] = str(content)
        if append:
            args["append"] = True
        s, _ = self.client.call_tool("code_write_file", args)
        return WriteResult(success=True, path=str(s.get("path", path)),
                           bytes=int(s.get("bytes", 0)), sha256=str(s.get("sha256", "")))

    def read(self, path: str, max_bytes: Optional[int] = None,
             binary: bool = False) -> ReadResult:
        """``code_read_file`` (``binary``: always base64)."""
        args: Dict[str, Any] = {"session_id": self.id, "path": path}
        if max_bytes is not None:
            args["max_bytes"] = int(max_bytes)
        if binary:
            args["encoding"] = "base64"
        s, _ = self.client.call_tool("code_read_file", args)
        return ReadResult(success=True, path=ws_path(path), content=str(s.get("content", "")),
                          encoding=str(s.get("encoding", "utf8")), size=int(s.get("size", 0)),
                          truncated=bool(s.get("truncated")))

    def read_bytes(self, path: str) -> bytes:
        """The whole file as bytes (raises if larger than :data:`MAX_READ`)."""
        r = self.read(path, max_bytes=MAX_READ, binary=True)
        if r.truncated:
            raise SandboxError(f"{path}: larger than {MAX_READ} bytes")
        return r.data()

    def list(self, path: str = WORKSPACE, recursive: bool = False,
             max_entries: Optional[int] = None) -> ListResult:
        """``code_list_files``."""
        args: Dict[str, Any] = {"session_id": self.id, "path": path}
        if recursive:
            args["recursive"] = True
        if max_entries is not None:
            args["max_entries"] = int(max_entries)
        s, _ = self.client.call_tool("code_list_files", args)
        base = ws_path(path)
        entries = [FileEntry(path=str(e.get("path", "")), type=str(e.get("type", "")),
                             size=int(e.get("size") or 0), mtime=float(e.get("mtime") or 0),
                             mode=str(e.get("mode", ""))) for e in s.get("entries", [])]
        files = []
        for e in entries:
            rel = posixpath.relpath(e.path, base)
            files.append(rel + "/" if e.type == "directory" else rel)
        return ListResult(success=True, path=base, files=files, entries=entries,
                          truncated=bool(s.get("truncated")))

    def sandbox_info(self) -> Dict[str, Any]:
        """``code_sandbox_info`` of this session."""
        s, _ = self.client.call_tool("code_sandbox_info", {"session_id": self.id})
        self.info.update({k: v for k, v in s.items() if k != "sessions"})
        return s

    def mark_private(self, level: str, dataset: Optional[str] = None) -> Dict[str, Any]:
        """``code_mark_private``: raise the session's data level (the network ratchet)."""
        args: Dict[str, Any] = {"session_id": self.id, "level": level}
        if dataset:
            args["dataset"] = dataset
        s, _ = self.client.call_tool("code_mark_private", args)
        return s

    def destroy(self) -> bool:
        """``code_destroy_sandbox``; a session never created or already gone is fine."""
        if self._id is None:
            return False
        sid, self._id = self._id, None
        try:
            s, _ = self.client.call_tool("code_destroy_sandbox", {"session_id": sid})
            return bool(s.get("destroyed", True))
        except SandboxError:
            return False

    # -- copying between the host and the workspace --------------------------------------
    def push(self, source: str, target: str) -> int:
        """Copy a host file or directory tree into the workspace at ``target``. Regular
        files only (symbolic links on the host are skipped, never followed). Returns the
        number of files copied."""
        n = 0
        if os.path.isfile(source) and not os.path.islink(source):
            with open(source, "rb") as f:
                self.write(target, f.read())
            return 1
        walked = list(os.walk(source, followlinks=False))
        dirs_in = [posixpath.join(target, *([] if r == source else
                                           os.path.relpath(r, source).split(os.sep)))
                   for r, _, _ in walked]
        if dirs_in:  # directories, empty ones too (the file tool makes only parents)
            r = self.execute("mkdir -p -- " + " ".join(shlex.quote(d) for d in dirs_in),
                             "shell")
            if r.exit_code != 0:
                raise SandboxError(f"cannot make {target} in the sandbox: {r.stderr.strip()}")
        for root, dirs, files in walked:
            rel_root = os.path.relpath(root, source)
            for name in files:
                p = os.path.join(root, name)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                with open(p, "rb") as f:
                    data = f.read()
                dest = posixpath.join(target, *([] if rel_root == "." else
                                                rel_root.split(os.sep)), name)
                self.write(dest, data)
                n += 1
        return n

    def pull(self, target: str, dest: str) -> int:
        """Copy the workspace tree at ``target`` back to the host directory ``dest``:
        regular files only, every path checked to stay below ``dest``. Returns the number
        of files copied."""
        base = ws_path(target)
        dest_real = os.path.realpath(dest)
        n = 0
        for e in self._walk(base):
            rel = posixpath.relpath(e.path, base)
            if rel.startswith("..") or posixpath.isabs(rel):
                continue
            out = os.path.realpath(os.path.join(dest_real, *rel.split("/")))
            if not (out == dest_real or out.startswith(dest_real + os.sep)):
                continue
            if e.type == "directory":
                os.makedirs(out, exist_ok=True)
            elif e.type == "file":
                os.makedirs(os.path.dirname(out), exist_ok=True)
                data = self.read_bytes(e.path)
                tmp = out + ".sbxtrace-tmp"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, out)
                n += 1
        return n

    def _walk(self, base: str) -> Iterable[FileEntry]:
        r = self.list(base, recursive=True, max_entries=100000)
        if r.truncated:
            raise SandboxError(f"{base}: too many files to copy back")
        return sorted(r.entries, key=lambda e: e.path)


def entries_to_names(entries: List[FileEntry]) -> List[str]:
    """Names of entries (for listings shaped as lists of strings)."""
    return [e.name for e in entries]
