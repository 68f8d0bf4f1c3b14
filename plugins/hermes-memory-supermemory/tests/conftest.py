"""Fixtures: the Supermemory double on 127.0.0.1 and a guard that refuses any connection
that is not loopback (the suite runs offline)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from supermemory_double import SupermemoryDouble, supermemory_double

from hermes_core.testing.loopback import LoopbackServer
from hermes_core.testing.offline import block_network, serve


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any non-loopback connection attempt fails the test loudly."""
    block_network(monkeypatch)


@pytest.fixture
def double() -> Iterator[tuple[SupermemoryDouble, LoopbackServer]]:
    made, server = supermemory_double()
    for running in serve(server):
        yield made, running


def settings_for(base_url: str, **extra: Any) -> dict[str, Any]:
    return {"base_url": base_url, "api_key": "test-key", "api_timeout": 3.0, "retries": 0, **extra}
