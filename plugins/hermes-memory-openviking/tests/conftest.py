"""Fixtures for the OpenViking provider tests: the loopback double and a guard that refuses
any socket connection that is not loopback (the suite must run offline)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing.offline import block_network, serve

sys.path.insert(0, str(Path(__file__).parent))

from openviking_double import OpenVikingDouble


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    block_network(
        monkeypatch,
        env_names=(
            "OPENVIKING_URL",
            "OPENVIKING_ENDPOINT",
            "OPENVIKING_API_KEY",
            "OPENVIKING_ACCOUNT",
            "OPENVIKING_USER",
            "OPENVIKING_ACTOR_PEER_ID",
            "OPENVIKING_AGENT",
        ),
    )


@pytest.fixture
def double() -> Iterator[tuple[OpenVikingDouble, Any]]:
    """``(state, server)``: the running double; no OpenAPI violations allowed."""
    state = OpenVikingDouble()
    for server in serve(state.server()):
        yield state, server
