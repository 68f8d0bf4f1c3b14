"""Fixtures: offline guard (only loopback connections), a clean environment and the
loopback double of RetainDB's Memory API."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_core.testing.offline import block_network, provider_factory, serve_double

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_retaindb import RetainDBProvider, RetainDBSettings
from retaindb_double import RetainDBDouble


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any non-loopback connection attempt fails the test loudly; RETAINDB_* from the
    outer environment never leak in."""
    block_network(monkeypatch, env_prefixes=("RETAINDB_",))


@pytest.fixture
def double() -> Iterator[RetainDBDouble]:
    yield from serve_double(RetainDBDouble(api_key="rdb-test-key"))


@pytest.fixture
def make_provider(hermes_home: Path) -> Iterator[Callable[..., RetainDBProvider]]:
    yield from provider_factory(lambda **s: RetainDBProvider(RetainDBSettings(**s), hermes_home))
