"""Fixtures for the session-archive tests: a real archive in a temporary home, on each backend.

Every test that uses ``home`` (and so ``db``, ``cli``…) runs twice: ``[sqlite]`` on a real
``state.db`` and ``[postgresql]`` on a fresh database of the session's embedded PostgreSQL
server (``HERMES_SESSIONS__BACKEND``/``HERMES_SESSIONS__URL`` point the settings at it, so the
CLI and the plugin use it too). Tests about the SQLite file itself are marked
``@pytest.mark.sqlite_only`` and are not collected for ``[postgresql]``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from hermes_core.cli.sessions import register
from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.store import open_configured
from hermes_core.scope import ALL_USERS

BACKENDS = ("sqlite", "postgresql")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the ``[postgresql]`` variant of tests marked ``sqlite_only``."""
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_pg = callspec is not None and callspec.params.get("backend") == "postgresql"
        (dropped if on_pg and item.get_closest_marker("sqlite_only") else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The archive backend this test runs on."""
    return str(request.param)


@pytest.fixture
def home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str, request: pytest.FixtureRequest
) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    for key in list(os.environ):
        # no outer override picks the backend or its settings (the test kit's own switch stays)
        if key.startswith("HERMES_") and key != "HERMES_TEST_POSTGRES":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HERMES_HOME", str(path))
    if backend == "postgresql":
        url = request.getfixturevalue("postgres_url")
        monkeypatch.setenv("HERMES_SESSIONS__BACKEND", "postgresql")
        monkeypatch.setenv("HERMES_SESSIONS__URL", url)
    return path


class Homes:
    """Hermes homes on the backend under test: :meth:`new` switches ``HERMES_HOME`` to a new
    empty home (on PostgreSQL with a new empty database), :meth:`use` back to a known one."""

    def __init__(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
    ) -> None:
        self.tmp_path, self.monkeypatch, self.request = tmp_path, monkeypatch, request
        self.urls: dict[Path, str | None] = {}
        home = Path(os.environ["HERMES_HOME"])
        self.urls[home] = os.environ.get("HERMES_SESSIONS__URL")

    def new(self) -> Path:
        path = self.tmp_path / f"other-home-{len(self.urls)}"
        path.mkdir()
        url = None
        if os.environ.get("HERMES_SESSIONS__BACKEND") == "postgresql":
            server = self.request.getfixturevalue("postgres_server")
            url = server.create_database()
            self.request.addfinalizer(lambda: server.drop_database(url))
        self.urls[path] = url
        return self.use(path)

    def use(self, path: Path) -> Path:
        self.monkeypatch.setenv("HERMES_HOME", str(path))
        url = self.urls[path]
        if url is not None:
            self.monkeypatch.setenv("HERMES_SESSIONS__URL", url)
        return path


@pytest.fixture
def homes(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Homes:
    """See :class:`Homes` (starts at ``home``)."""
    return Homes(tmp_path, monkeypatch, request)


@pytest.fixture
def small_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The windowing of a 1M archive (issue 22) and its archive-wide rare-term discovery
    (issue 28), scaled to a few thousand messages."""
    from hermes_core.layers.sessions import ranking

    monkeypatch.setattr(ranking, "WINDOW_MIN", 256)
    monkeypatch.setattr(ranking, "WINDOW_TARGET", 120)
    monkeypatch.setattr(ranking, "EXACT_MAX", 400)
    monkeypatch.setattr(ranking, "CANDIDATES", 30)
    monkeypatch.setattr(ranking, "RARE_MAX", 40)
    monkeypatch.setattr(ranking, "RARE_ROWS_MAX", 120)


@pytest.fixture
def db(home: Path) -> Iterator[SessionStore]:
    store = open_configured(home)
    yield store
    store.close()


def _add_session(
    db: SessionStore,
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
        user_id=ALL_USERS,
    )


@pytest.fixture
def add_session() -> object:
    """The :func:`_add_session` helper."""
    return _add_session


@pytest.fixture
def cli() -> click.Group:
    """A root group with ``hermes-memory sessions`` registered (for CliRunner)."""

    @click.group()
    def root() -> None:
        pass

    register(root)
    return root
