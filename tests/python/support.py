"""Shared set-up for the Python client's tests: each test class gets its own data
directory and its own spawned ``sbxtrace mcp`` (SBXTRACE_BIN), with a config that lets
sessions ask for every network mode (to exercise the ratchet)."""
from __future__ import annotations

import os
import shutil
import tempfile
import unittest

from sbxtrace import Client

CONFIG = """
[network]
modes = ["none", "loopback", "allowlist", "full"]
allowed_domains = ["example.org:443", "pypi.org:443"]
trusted = ["example.org:443"]
"""


def have_node() -> bool:
    """Whether JavaScript can run (node on PATH)."""
    return shutil.which("node", path="/usr/bin:/bin") is not None


class ServerTest(unittest.TestCase):
    """A class-wide data directory and client; ``self.client``, ``self.data_dir``."""

    client: Client
    data_dir: str
    config: str

    @classmethod
    def setUpClass(cls) -> None:
        if not os.environ.get("SBXTRACE_BIN"):
            raise unittest.SkipTest("SBXTRACE_BIN is not set")
        cls.tmp = tempfile.mkdtemp(prefix="sbxtrace-py-")
        cls.data_dir = os.path.join(cls.tmp, "sessions")
        cls.config = os.path.join(cls.tmp, "mcp.toml")
        with open(cls.config, "w") as f:
            f.write(CONFIG)
        cls.client = Client(data_dir=cls.data_dir, config=cls.config)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)
