"""Fixtures: offline guard (only loopback connections), a clean environment, the loopback
double and (in `tox -e providers-hindsight-server`) Hindsight's real server."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_core.testing.offline import block_network, provider_factory, serve_double

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_hindsight import HindsightProvider, HindsightSettings
from hindsight_double import HindsightDouble

REAL_SERVER_ENV = "HERMES_TEST_HINDSIGHT_SERVER"
"""Set to 1 to run the real-server tests; they then fail (never skip) if it cannot start."""


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any non-loopback connection attempt fails the test loudly; HINDSIGHT_* from the
    outer environment never leak in."""
    block_network(monkeypatch, env_prefixes=("HINDSIGHT_",))


@pytest.fixture
def double() -> Iterator[HindsightDouble]:
    yield from serve_double(HindsightDouble(api_key="hs-test-key"))


@pytest.fixture
def make_provider(hermes_home: Path) -> Iterator[Callable[..., HindsightProvider]]:
    yield from provider_factory(lambda **s: HindsightProvider(HindsightSettings(**s), hermes_home))


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
