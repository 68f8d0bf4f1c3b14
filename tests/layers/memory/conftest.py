"""Fixtures of the memory layer tests.

Every test that uses ``hermes_home`` (and so every :class:`MemoryKit`) runs once per
store: ``files`` (``$HERMES_HOME/memories``) and ``postgresql`` (a fresh database on the
session's embedded server, see :mod:`hermes_core.testing.postgres`). A test about the file
format itself (drift backups, FIFOs, lock files, mtimes, the ``.md`` bytes on disk) is
marked ``files_only`` and runs against the file store alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from memkit import MemoryKit
from pydantic import SecretStr

from hermes_core.pg import close_pools

STORES = ("files", "postgresql")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "files_only: a memory test about the file store itself (no PostgreSQL run)"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "memory_store" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("files_only") is not None
        metafunc.parametrize("memory_store", ["files"] if only else list(STORES), indirect=True)


@pytest.fixture
def memory_store(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The ``memory.*`` values selecting the store under test (``{}`` = the default files)."""
    if request.param == "files":
        yield {}
        return
    url = request.getfixturevalue("postgres_url")
    yield {"store": "postgresql", "url": SecretStr(url)}
    close_pools()  # this test's database is dropped next: no pool (or its thread) outlives it


@pytest.fixture
def hermes_home(
    hermes_home: Path, memory_store: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The kit's fresh home, with the store under test selected the way an operator would:
    ``HERMES_MEMORY__STORE`` / ``HERMES_MEMORY__URL`` in the environment, so the layer, the
    host, the CLI and a test's own config.yaml all see it."""
    if not memory_store:
        yield hermes_home
        return
    monkeypatch.setenv("HERMES_MEMORY__STORE", str(memory_store["store"]))
    monkeypatch.setenv("HERMES_MEMORY__URL", memory_store["url"].get_secret_value())
    yield hermes_home
    # the run really went to PostgreSQL: no memory file or staged record was written here
    written = sorted((hermes_home / "memories").rglob("*.md"))
    written += sorted((hermes_home / "pending" / "memory").rglob("*.json"))
    assert not written, f"the postgresql run wrote local files: {written}"


@pytest.fixture
def kit_factory(hermes_home: Path, memory_store: dict[str, Any]) -> Callable[..., MemoryKit]:
    def make(**memory: Any) -> MemoryKit:
        return MemoryKit(hermes_home, **memory)

    return make


@pytest.fixture
def kit(kit_factory: Callable[..., MemoryKit]) -> MemoryKit:
    return kit_factory()
