"""A seeded two-user home and the inspector app on it (HTTP tests and browser tests)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")

from ui_kit import seed


@pytest.fixture
def ui_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    for key in list(os.environ):
        if key.startswith("HERMES_") and key != "HERMES_TEST_POSTGRES":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    seed(home)
    yield home
