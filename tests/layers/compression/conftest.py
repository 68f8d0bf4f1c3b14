"""Local fixtures for the compression layer tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.testing.fake_llm import FakeLLMServer


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started loopback FakeLLMServer, stopped after the test."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HERMES_HOME under tmp_path."""
    path = tmp_path / "hermes-home"
    path.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    return path
