"""Fixtures for the OpenViking provider tests: the loopback double and a guard that refuses
any socket connection that is not loopback (the suite must run offline)."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from openviking_double import OpenVikingDouble

_real_connect = socket.socket.connect


def _loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # unix socket
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def guarded(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            raise AssertionError(f"test tried to reach {address!r}: tests must stay offline")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    for name in (
        "OPENVIKING_URL",
        "OPENVIKING_ENDPOINT",
        "OPENVIKING_API_KEY",
        "OPENVIKING_ACCOUNT",
        "OPENVIKING_USER",
        "OPENVIKING_ACTOR_PEER_ID",
        "OPENVIKING_AGENT",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def double() -> Iterator[tuple[OpenVikingDouble, Any]]:
    """``(state, server)``: the running double; no OpenAPI violations allowed."""
    state = OpenVikingDouble()
    server = state.server()
    with server:
        yield state, server
    server.assert_no_violations()
