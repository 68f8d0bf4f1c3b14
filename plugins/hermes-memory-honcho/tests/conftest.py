"""Fixtures: the Honcho double on 127.0.0.1 and a guard that refuses any connection that is
not loopback (the suite runs offline)."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from honcho_double import HonchoDouble, honcho_double

from hermes_core.testing.loopback import LoopbackServer

_real_connect = socket.socket.connect


def _loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):
        return True
    try:
        return ipaddress.ip_address(address[0]).is_loopback
    except ValueError:
        return address[0] == "localhost"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any non-loopback connection attempt fails the test loudly."""

    def connect(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            raise AssertionError(f"network access attempted: {address!r}")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def double() -> Iterator[tuple[HonchoDouble, LoopbackServer]]:
    made, server = honcho_double()
    with server:
        yield made, server
    server.assert_no_violations()


def settings_for(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "base_url": base_url,
        "api_key": "test-key",
        "timeout": 3.0,
        "retries": 0,
        "session_strategy": "per-session",
        **extra,
    }
