"""Exceptions raised by the sbxtrace client.

Every exception derives from :class:`SandboxError`, so ``except SandboxError`` catches
them all. Failures of the *code* that ran (a non-zero exit, a timeout inside the sandbox)
are normally reported in the result objects (``exit_code``, ``timed_out``); exceptions are
for failures of the sandbox itself, of the server, or of the protocol.
"""
from __future__ import annotations

from typing import Any, Dict, Optional


class SandboxError(Exception):
    """A sandbox operation failed: the server refused a call, or the server is unreachable.

    ``tool`` names the MCP tool that failed when there was one; ``result`` holds the
    server's structured result (or ``None``).
    """

    def __init__(self, message: str, *, tool: Optional[str] = None,
                 result: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool = tool
        self.result = result


class SandboxTimeout(SandboxError):
    """The code ran out of time (``timed_out`` in the result) and the caller asked for an
    exception, or the server did not answer a request within the client's deadline."""


class ApprovalRequired(SandboxError):
    """The server holds the call for a human's approval and no approval channel answered
    (the server's ``approval_required`` answer). ``reason`` is the server's reason."""

    def __init__(self, message: str, *, reason: str = "", tool: Optional[str] = None,
                 result: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message, tool=tool, result=result)
        self.reason = reason


class SessionNotFound(SandboxError):
    """The session does not exist: it was destroyed, expired after being idle, or belongs
    to another tenant (the server answers all three alike)."""


class ServerDied(SandboxError):
    """The spawned ``sbxtrace mcp`` exited while a call was in flight. The call's outcome is
    unknown; the next call starts a new server on the same data directory, where the
    session and its workspace are still there."""


class BinaryNotFound(SandboxError):
    """The ``sbxtrace`` binary is neither at ``$SBXTRACE_BIN`` nor on ``PATH``."""


class ProtocolError(SandboxError):
    """The server answered with a JSON-RPC error (a malformed request or an unknown tool).
    ``code`` is the JSON-RPC error code."""

    def __init__(self, message: str, *, code: int = 0, tool: Optional[str] = None) -> None:
        super().__init__(message, tool=tool)
        self.code = code


class InvalidWorkspace(SandboxError, ValueError):
    """A host workspace that must not be given to a sandbox (``/``, a system directory),
    as seed 004's ``validate_workspace`` refuses."""
