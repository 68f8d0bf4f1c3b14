"""Fixtures: a fake ``brv`` first on PATH for every test, and a guard that refuses any
socket connection that is not loopback (the suite must run offline)."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_brv import FakeBrv

_real_connect = socket.socket.connect


def _loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def fake_brv(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> FakeBrv:
    """The fake brv, first on PATH; ``BRV_API_KEY`` cleared."""

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            raise AssertionError(f"test tried to reach {address!r}: tests must stay offline")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    fake = FakeBrv(tmp_path_factory.mktemp("brvbin"))
    monkeypatch.setenv("PATH", f"{fake.path.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("BRV_API_KEY", raising=False)
    return fake
