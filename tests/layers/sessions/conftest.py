"""Fixtures for the session-archive tests: a real state.db in a temporary home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from hermes_core.cli.sessions import register
from hermes_core.layers.sessions.db import SessionDB


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    return path


@pytest.fixture
def db(home: Path) -> Iterator[SessionDB]:
    store = SessionDB.open(home)
    yield store
    store.close()


def _add_session(
    db: SessionDB,
    sid: str,
    texts: list[tuple[str, str]],
    *,
    source: str = "cli",
    started_at: float | None = None,
    parent: str | None = None,
    title: str | None = None,
) -> list[int]:
    """Create ``sid`` and append ``(role, content)`` messages; returns their ids."""
    db.create_session(
        sid, source=source, started_at=started_at, parent_session_id=parent, title=title
    )
    return db.append_messages(
        sid,
        [{"role": role, "content": content} for role, content in texts],
        timestamp=started_at,
    )


@pytest.fixture
def add_session() -> object:
    """The :func:`_add_session` helper."""
    return _add_session


@pytest.fixture
def cli() -> click.Group:
    """A root group with ``hermes sessions`` registered (for CliRunner)."""

    @click.group()
    def root() -> None:
        pass

    register(root)
    return root
