"""The synchronous core every interface is built on: one sandbox session of
``sbxtrace mcp`` (``code_create_sandbox`` … ``code_destroy_sandbox``), created lazily, plus
copying host directories into and out of its workspace through the file tools."""
from __future__ import annotations

import base64
import os
import posixpath
import shlex
import threading
from typing import Any, Dict, Iterable, List, Optional

from ._client import GRACE_S, Client, get_client
from .errors import SandboxError
from .results import ExecutionResult, FileEntry, ListResult, ReadResult, WriteResult

WORKSPACE = "/workspace"
#: The most a read through :meth:`Session.read_bytes` asks for.
MAX_READ = 16 * 2**20  # the server's cap for code_read_file


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
                one_shot: bool = False) -> ExecutionResult:
        """``code_execute``: run code in the session (or in a one-shot sandbox)."""
        args: Dict[str, Any] = {"language": language, "code": code}
        if not one_shot:
            args["session_id"] = self.id
        if timeout is not None:
            args["timeout"] = max(1, int(round(timeout)))
        if stdin is not None:
            args["stdin"] = stdin
        if env:
            args["env"] = dict(env)
        deadline = (timeout if timeout is not None else self.wall_s()) + GRACE_S
        s, _ = self.client.call_tool("code_execute", args, timeout=deadline,
                                     error_is_result=True)
        return ExecutionResult.from_structured(s)

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
