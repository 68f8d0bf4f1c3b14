"""Fixtures: a tmp HERMES_HOME and sessions; any non-loopback socket fails the test."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_holographic import HolographicProvider, HolographicSettings

# CI replays the same hypothesis examples every run (CI=true): a failure there is a real,
# reproducible one, never a lucky draw; local runs keep exploring new examples.
if os.environ.get("CI"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("ci")


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if not isinstance(address, str | bytes) and address[0] not in (
            "127.0.0.1",
            "::1",
            "localhost",
        ):
            raise AssertionError(f"network access attempted: {address!r}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "hermes"
    h.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(h))
    return h


@pytest.fixture
def make_provider(home: Path) -> Iterator[Callable[..., HolographicProvider]]:
    made: list[HolographicProvider] = []

    def factory(**settings: Any) -> HolographicProvider:
        p = HolographicProvider(HolographicSettings(**settings), home)
        made.append(p)
        return p

    yield factory
    for p in made:
        p.shutdown()
