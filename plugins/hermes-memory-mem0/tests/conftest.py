"""Fixtures: a tmp HERMES_HOME, sessions, providers, and a guard that refuses any socket
connection that is not loopback (the suite must run offline)."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# mem0 reads these at import time: set them before anything imports mem0.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0dir-"))

from hermes_memory_mem0 import Mem0Provider, Mem0Settings

# CI replays the same hypothesis examples every run (CI=true): a failure there is a real,
# reproducible one, never a lucky draw; local runs keep exploring new examples.
if os.environ.get("CI"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("ci")


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # unix socket
        return True
    host = address[0]
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any non-loopback connection attempt fails the test loudly."""

    def connect(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            raise AssertionError(f"network access attempted: {address!r}")
        return _real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            raise AssertionError(f"network access attempted: {address!r}")
        return _real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("MEM0_API_KEY", "MEM0_HOST", "MEM0_MODE", "MEM0_USER_ID", "MEM0_AGENT_ID"):
        monkeypatch.delenv(var, raising=False)
    h = tmp_path / "hermes"
    h.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(h))
    return h


@pytest.fixture
def make_provider(home: Path) -> Iterator[Callable[..., Mem0Provider]]:
    made: list[Mem0Provider] = []

    def factory(**settings: Any) -> Mem0Provider:
        p = Mem0Provider(Mem0Settings(**settings), home)
        made.append(p)
        return p

    yield factory
    for p in made:
        p.shutdown()
