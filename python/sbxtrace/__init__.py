"""sbxtrace: the sandbox interfaces agent frameworks call, on ``sbxtrace mcp``.

Pure Python, standard library only. The client spawns ``sbxtrace mcp`` (``$SBXTRACE_BIN``
or ``PATH``) over stdio, or talks to a shared server at ``$SBXTRACE_URL`` (token
``$SBXTRACE_TOKEN``) over HTTP. See docs/python.md.

* seed 000: :class:`Sandbox` (``run``), :class:`BindMount`, :class:`SandboxResult`,
  :class:`NetworkMode`, :func:`get_sandbox`, :func:`add_private_dataset`
* seed 001: :class:`SecurityLevel`, :class:`SandboxedRunner`
* seed 002: :class:`CodeSandbox`, :class:`ExecutionResult`, :func:`get_code_sandbox`
* seed 003: :class:`SandboxManager`
* seed 004: :class:`Sandbox` (``start``/``execute``/``stop``)
* E2B: :mod:`sbxtrace.e2b`
"""
from ._client import Client, find_binary, get_client
from .code import CodeSandbox, CodeSandboxProtocol, get_code_sandbox
from .errors import (ApprovalRequired, BinaryNotFound, InvalidWorkspace, ProtocolError,
                     SandboxError, SandboxTimeout, ServerDied, SessionNotFound)
from .manager import SandboxManager
from .results import (ExecutionResult, FileEntry, InstallResult, ListResult, ReadResult,
                      SandboxResult, WriteResult)
from .runner import SandboxConfig, SandboxedRunner, SecurityLevel, create_runner
from .sandbox import (BindMount, DataLevel, NetworkMode, PrivateData, Sandbox,
                      add_private_dataset, get_network_mode, get_sandbox, validate_workspace)

__version__ = "0.1.0"

__all__ = [
    "Sandbox", "BindMount", "SandboxResult", "ExecutionResult", "NetworkMode", "DataLevel",
    "PrivateData", "get_sandbox", "get_network_mode", "add_private_dataset",
    "validate_workspace", "SandboxedRunner", "SecurityLevel", "SandboxConfig",
    "create_runner", "CodeSandbox", "CodeSandboxProtocol", "get_code_sandbox",
    "SandboxManager", "InstallResult", "WriteResult", "ReadResult", "ListResult",
    "FileEntry", "SandboxError", "SandboxTimeout", "ApprovalRequired", "SessionNotFound",
    "ServerDied", "BinaryNotFound", "InvalidWorkspace", "ProtocolError", "Client",
    "get_client", "find_binary", "__version__",
]
