"""A seeded home for the inspector's tests, on files/SQLite or on PostgreSQL (memory store
and session archive both on the test kit's embedded server)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspector_kit import seed


@pytest.fixture(params=["files", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, request: pytest.FixtureRequest
) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    for key in list(os.environ):
        if key.startswith("HERMES_") and key != "HERMES_TEST_POSTGRES":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HERMES_HOME", str(path))
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(path / ".mem0"))
    if backend == "postgresql":
        url = request.getfixturevalue("postgres_url")
        monkeypatch.setenv("HERMES_SESSIONS__BACKEND", "postgresql")
        monkeypatch.setenv("HERMES_SESSIONS__URL", url)
        monkeypatch.setenv("HERMES_MEMORY__STORE", "postgresql")
        monkeypatch.setenv("HERMES_MEMORY__URL", url)
    return path


@pytest.fixture
def seeded(home: Path) -> Iterator[Path]:
    seed(home)
    yield home
