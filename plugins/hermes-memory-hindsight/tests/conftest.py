"""Fixtures: offline guard (only loopback connections), a clean environment, the loopback
double and (in `tox -e providers-hindsight-server`) Hindsight's real server."""

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

from hermes_memory_hindsight import HindsightProvider, HindsightSettings
from hindsight_double import HindsightDouble

REAL_SERVER_ENV = "HERMES_TEST_HINDSIGHT_SERVER"
"""Set to 1 to run the real-server tests; they then fail (never skip) if it cannot start."""

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
    """Any non-loopback connection attempt fails the test loudly; HINDSIGHT_* from the
    outer environment never leak in."""
    for var in [v for v in os.environ if v.startswith("HINDSIGHT_")]:
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
def double() -> Iterator[HindsightDouble]:
    made = HindsightDouble(api_key="hs-test-key")
    with made.server:
        yield made
    made.server.assert_no_violations()


@pytest.fixture
def make_provider(hermes_home: Path) -> Iterator[Callable[..., HindsightProvider]]:
    made: list[HindsightProvider] = []

    def factory(**settings: Any) -> HindsightProvider:
        provider = HindsightProvider(HindsightSettings(**settings), hermes_home)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.shutdown()


@pytest.fixture(scope="session")
def real_server() -> Iterator[str]:
    """The URL of Hindsight's own server (started once per test run)."""
    if os.environ.get(REAL_SERVER_ENV) != "1":
        pytest.skip(
            f"real Hindsight server tests run with {REAL_SERVER_ENV}=1 "
            "(tox -e providers-hindsight-server)"
        )
    from hindsight_server import start_server

    server = start_server()
    try:
        yield server.url
    finally:
        server.stop()
