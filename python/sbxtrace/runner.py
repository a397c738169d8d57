"""Seed 001: security levels and :class:`SandboxedRunner`.

Levels map onto the server's presets with the seed's numbers as session limits:

========== ========= ============ ========== ================================
level      preset    wall-clock   memory     notes
========== ========= ============ ========== ================================
PERMISSIVE python    60 s         1024 MiB   Python-tuned, workspace read-write
STANDARD   standard  30 s         512 MiB    the default
STRICT     strict    10 s         256 MiB    workspace read-only, 16 tasks
========== ========= ============ ========== ================================

Context and result travel as JSON through stdin and stdout (pickle only when asked), so
even STRICT's read-only workspace is enough. ``allowed_modules`` is recorded but not
enforced by an import hook: the seed notes such lists are bypassable; the sandbox is the
boundary (no network, no host files) whatever the code imports.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from ._client import Client, get_client, run_async
from ._session import Session
from .results import SandboxResult
from .sandbox import run_python_in


class SecurityLevel(enum.Enum):
    """Seed 001's levels."""

    PERMISSIVE = "permissive"
    STANDARD = "standard"
    STRICT = "strict"


#: level -> (server preset, tasks)
_PRESETS = {SecurityLevel.PERMISSIVE: "python", SecurityLevel.STANDARD: "standard",
            SecurityLevel.STRICT: "strict"}


@dataclass(frozen=True)
class SandboxConfig:
    """Seed 001's configuration."""

    security_level: SecurityLevel = SecurityLevel.STANDARD
    timeout_seconds: float = 30.0
    max_memory_mb: int = 512
    allowed_modules: Tuple[str, ...] = ("pandas", "math", "statistics", "json")
    serializer: str = "json"

    @classmethod
    def for_level(cls, level: SecurityLevel) -> "SandboxConfig":
        """The seed's numbers for ``level``."""
        return {
            SecurityLevel.PERMISSIVE: cls(level, 60.0, 1024, ("pandas", "math", "statistics",
                                                               "json", "numpy", "datetime")),
            SecurityLevel.STANDARD: cls(level, 30.0, 512, ("pandas", "math", "statistics",
                                                           "json")),
            SecurityLevel.STRICT: cls(level, 10.0, 256, ("math", "statistics", "json")),
        }[level]

    @property
    def preset(self) -> str:
        """The server preset this level runs under."""
        return _PRESETS[self.security_level]


class SandboxedRunner:
    """Seed 001's runner: ``execute(code, context)`` / ``run(code, data=None)`` →
    :class:`~sbxtrace.results.SandboxResult` whose ``result`` is what the code assigned
    to ``result``. One server session per runner (created on the first call, with the
    level's preset and limits); :meth:`cleanup` or ``with`` destroys it.
    """

    def __init__(self, config: Optional[SandboxConfig] = None, *,
                 level: Optional[SecurityLevel] = None, client: Optional[Client] = None) -> None:
        if config is None:
            config = SandboxConfig.for_level(level or SecurityLevel.STANDARD)
        self.config = config
        limits = {"wall_s": max(1, int(round(config.timeout_seconds))),
                  "memory_mb": int(config.max_memory_mb)}
        self.session = Session(client or get_client(), policy=config.preset, limits=limits)

    def execute(self, code: str, context: Optional[Dict[str, Any]] = None) -> SandboxResult:
        """Run ``code`` with ``context``'s keys as variables."""
        return run_python_in(self.session, code, context or {},
                             serializer=self.config.serializer,
                             timeout=self.config.timeout_seconds)

    def run(self, code: str, data: Any = None) -> SandboxResult:
        """Run ``code`` with ``data`` as ``inputs`` (and, for a dict, its keys as
        variables)."""
        return run_python_in(self.session, code, data, serializer=self.config.serializer,
                             timeout=self.config.timeout_seconds)

    async def execute_async(self, code: str,
                            context: Optional[Dict[str, Any]] = None) -> SandboxResult:
        """:meth:`execute` without blocking the event loop."""
        return await run_async(self.execute, code, context)

    async def run_async(self, code: str, data: Any = None) -> SandboxResult:
        """:meth:`run` without blocking the event loop."""
        return await run_async(self.run, code, data)

    def cleanup(self) -> None:
        """Destroy the session."""
        self.session.destroy()

    def __enter__(self) -> "SandboxedRunner":
        return self

    def __exit__(self, *args: Any) -> None:
        self.cleanup()


def create_runner(level: SecurityLevel = SecurityLevel.STANDARD,
                  config: Optional[SandboxConfig] = None) -> SandboxedRunner:
    """Seed 001's factory: every level runs in sbxtrace (no in-process fallback)."""
    return SandboxedRunner(config or SandboxConfig.for_level(level))
