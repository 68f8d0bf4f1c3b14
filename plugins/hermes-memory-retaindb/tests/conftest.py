"""Fixtures: offline guard (only loopback connections), a clean environment and the
loopback double of RetainDB's Memory API."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_retaindb import RetainDBProvider, RetainDBSettings
from retaindb_double import RetainDBDouble

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # unix socket (PostgreSQL)
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any non-loopback connection attempt fails the test loudly; RETAINDB_* from the
    outer environment never leak in."""
    for var in [v for v in os.environ if v.startswith("RETAINDB_")]:
        monkeypatch.delenv(var, raising=False)

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
def double() -> Iterator[RetainDBDouble]:
    made = RetainDBDouble(api_key="rdb-test-key")
    with made.server:
        yield made
    made.server.assert_no_violations()


@pytest.fixture
def make_provider(hermes_home: Path) -> Iterator[Callable[..., RetainDBProvider]]:
    made: list[RetainDBProvider] = []

    def factory(**settings: Any) -> RetainDBProvider:
        provider = RetainDBProvider(RetainDBSettings(**settings), hermes_home)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.shutdown()
