"""Seed 002: the :class:`CodeSandbox` protocol and :func:`get_code_sandbox`, configured by
the environment:

* ``SANDBOX_TYPE``: ``sbxtrace`` (or unset); ``local`` and ``docker`` are accepted and run
  in sbxtrace too (stronger than the former, no daemon unlike the latter); anything else
  is an error (for ``e2b`` use :mod:`sbxtrace.e2b`).
* ``SANDBOX_TIMEOUT_SEC`` (default 30).
* ``SANDBOX_STORE_CODE``: ``on_error`` (default), ``always``, ``never`` — whether each
  execution's artifact (``artifacts/executions/<timestamp>_<hash>_<id>.json`` in the
  session directory) keeps the code. A spawned server gets it through a generated
  ``--config``; a shared HTTP server keeps its operator's setting (``meta`` says which).
"""
from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
from typing import Any, Dict, Optional

try:
    from typing import Protocol, runtime_checkable
except ImportError:  # pragma: no cover - Python < 3.8
    Protocol = object  # type: ignore

    def runtime_checkable(c):  # type: ignore
        return c

from ._client import Client, get_client, run_async
from ._session import Session
from .results import ExecutionResult

_TYPES = ("", "sbxtrace", "local", "docker")
_STORE = ("on_error", "always", "never")
_LANGS = {"python": "python", "py": "python", "javascript": "javascript", "js": "javascript",
          "node": "javascript", "shell": "shell", "sh": "shell", "bash": "shell"}


@runtime_checkable
class CodeSandboxProtocol(Protocol):
    """Seed 002's interface, for type checks of other implementations."""

    def execute(self, code: str, language: str = "python",
                timeout: Optional[int] = None) -> ExecutionResult: ...


class CodeSandbox:
    """Seed 002's sandbox: each :meth:`execute` runs in a fresh one-shot sandbox (nothing
    carries over), ``code_execute`` without a session. ``meta`` reports ``runtime``,
    ``truncated``, ``timed_out``, ``killed_by``, ``limits``, ``usage``, ``artifact``,
    ``store_code``."""

    def __init__(self, timeout: Optional[int] = None, store_code: Optional[str] = None,
                 client: Optional[Client] = None, requested_type: str = "sbxtrace") -> None:
        self.timeout = int(timeout if timeout is not None
                           else os.environ.get("SANDBOX_TIMEOUT_SEC", "30"))
        self.store_code = store_code or os.environ.get("SANDBOX_STORE_CODE", "on_error")
        if self.store_code not in _STORE:
            raise ValueError(f"SANDBOX_STORE_CODE={self.store_code!r}: one of "
                             f"{', '.join(_STORE)}")
        self.requested_type = requested_type
        self.store_code_applied = True
        if client is None:
            url = os.environ.get("SBXTRACE_URL")
            if url:
                client = get_client(url=url)
                self.store_code_applied = False
            else:
                client = get_client(config=_store_code_config(self.store_code))
        self.session = Session(client)

    def execute(self, code: str, language: str = "python",
                timeout: Optional[int] = None) -> ExecutionResult:
        """Run ``code`` (``python``, ``javascript`` or ``shell``) in a fresh sandbox."""
        lang = _LANGS.get(language.lower())
        if lang is None:
            raise ValueError(f"language {language!r}: python, javascript or shell")
        r = self.session.execute(code, lang, timeout=timeout or self.timeout, one_shot=True)
        r.meta.update({"requested_type": self.requested_type, "store_code": self.store_code,
                       "store_code_applied": self.store_code_applied,
                       "timeout_s": timeout or self.timeout})
        return r

    async def execute_async(self, code: str, language: str = "python",
                            timeout: Optional[int] = None) -> ExecutionResult:
        """:meth:`execute` without blocking the event loop."""
        return await run_async(self.execute, code, language, timeout)


_configs: Dict[str, str] = {}


def _remove_config(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _store_code_config(store: str) -> Optional[str]:
    """A server config setting ``store_code`` (``None`` for the server's default)."""
    if store == "on_error":
        return None
    if store not in _configs:
        fd, path = tempfile.mkstemp(prefix="sbxtrace-store-", suffix=".toml")
        with os.fdopen(fd, "w") as f:
            f.write(f'[server]\nstore_code = "{store}"\n')
        # one file per process and setting, read by each server this process spawns; it goes
        # when the process exits (it was left in $TMPDIR on every run before)
        atexit.register(_remove_config, path)
        _configs[store] = path
    return _configs[store]


def get_code_sandbox(**kwargs: Any) -> CodeSandbox:
    """Seed 002's factory, reading ``SANDBOX_TYPE``, ``SANDBOX_TIMEOUT_SEC`` and
    ``SANDBOX_STORE_CODE``."""
    t = os.environ.get("SANDBOX_TYPE", "").strip().lower()
    if t not in _TYPES:
        raise ValueError(f"SANDBOX_TYPE={t!r}: this package runs sbxtrace (accepted: "
                         "sbxtrace, local, docker); for the E2B API use sbxtrace.e2b")
    return CodeSandbox(requested_type=t or "sbxtrace", **kwargs)
