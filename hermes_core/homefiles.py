"""Which database file in a Hermes home is ours: the one decision every layer asks.

A home (``$HERMES_HOME``) may be shared with Hermes Agent, which owns ``state.db`` there (its
``sessions``/``messages`` tables, ``schema_version`` 22 in 0.19.0, FTS triggers). hermes-core
never writes to that file: all of its own tables (the session archive, the memory archive,
compression events, skill outcomes) then live in :data:`OWN_DB` (``hermes_core.db``) beside
it, and Hermes Agent's sessions are read from ``state.db`` with read-only WAL connections
(``mode=ro``: no lock is held, Hermes Agent may write at the same time).

Contract:

* :func:`inspect_state_db` never writes, never creates a file and never changes the schema or
  the journal mode of the file it looks at.
* :func:`own_db_path` is ``<home>/state.db`` when that file is missing or is hermes-core's,
  and ``<home>/hermes_core.db`` when ``state.db`` was written by Hermes Agent or by another
  program. Once ``hermes_core.db`` exists it stays the answer (so moving Hermes Agent's file
  away for a minute never splits our tables over two files).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

STATE_DB = "state.db"
OWN_DB = "hermes_core.db"
OWNER_MARK = "hermes-core"

Owner = Literal["missing", "hermes-core", "hermes-agent", "other", "unreadable"]

HERMES_AGENT_TABLES = frozenset(
    {"session_model_usage", "gateway_routing", "compression_locks", "async_delegations"}
)
"""Tables only Hermes Agent creates in its ``state.db``."""
HERMES_AGENT_SESSION_COLUMNS = frozenset({"session_key", "billing_provider", "chat_id"})
"""``sessions`` columns only Hermes Agent has (any one of them marks its file)."""


@dataclass(frozen=True, slots=True)
class StateFile:
    """What :func:`inspect_state_db` found in ``path``."""

    path: Path
    owner: Owner
    schema: int | None = None
    sessions: int | None = None
    detail: str = ""

    @property
    def is_hermes_agent(self) -> bool:
        return self.owner == "hermes-agent"

    def describe(self) -> str:
        """One plain sentence, e.g. ``this state.db was written by Hermes Agent, schema 22``."""
        schema = f", schema {self.schema}" if self.schema is not None else ""
        count = f", {self.sessions} session(s)" if self.sessions is not None else ""
        if self.owner == "missing":
            return f"{self.path} does not exist yet (hermes-core creates it)"
        if self.owner == "hermes-core":
            return f"this {self.path.name} is hermes-core's{schema}{count}"
        if self.owner == "hermes-agent":
            return f"this {self.path.name} was written by Hermes Agent{schema}{count}"
        if self.owner == "unreadable":
            return f"this {self.path.name} cannot be read: {self.detail}"
        return f"this {self.path.name} belongs to another program ({self.detail}){schema}"


def connect_read_only(path: Path, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A ``mode=ro`` connection: it can never write, create the file or take a write lock.
    On a WAL file it is an ordinary WAL reader (a writer may commit meanwhile)."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)
    conn.execute("PRAGMA query_only=ON")
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def inspect_state_db(home: Path) -> StateFile:
    """Who wrote ``<home>/state.db`` (read-only look; see the module contract)."""
    return inspect_db_file(Path(home) / STATE_DB)


def inspect_db_file(path: Path) -> StateFile:
    """Who wrote the SQLite file at ``path`` (read-only look, whatever its name)."""
    path = Path(path)
    if not path.is_file():
        return StateFile(path, "missing")
    try:
        conn = connect_read_only(path)
    except sqlite3.Error as exc:
        return StateFile(path, "unreadable", detail=str(exc))
    try:
        tables = {
            str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        schema = None
        if "schema_version" in tables:
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            schema = int(row[0]) if row and isinstance(row[0], int) else None
        owner_mark = None
        if "state_meta" in tables:
            row = conn.execute("SELECT value FROM state_meta WHERE key='owner'").fetchone()
            owner_mark = row[0] if row else None
        sessions = None
        if "sessions" in tables:
            sessions = int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
        if owner_mark == OWNER_MARK:
            return StateFile(path, "hermes-core", schema, sessions)
        session_columns = _columns(conn, "sessions") if "sessions" in tables else set()
        if owner_mark is None and (
            tables & HERMES_AGENT_TABLES or session_columns & HERMES_AGENT_SESSION_COLUMNS
        ):
            return StateFile(path, "hermes-agent", schema, sessions)
        if owner_mark is not None:
            return StateFile(path, "other", schema, sessions, f"state_meta owner {owner_mark!r}")
        if not tables:
            return StateFile(path, "hermes-core", schema, sessions)  # empty: ours to create
        # No owner mark and nothing Hermes Agent-specific: an archive written by hermes-core
        # before the owner mark existed, or a foreign file; the sessions layer decides.
        return StateFile(path, "hermes-core", schema, sessions)
    except sqlite3.DatabaseError as exc:
        return StateFile(path, "unreadable", detail=str(exc))
    finally:
        conn.close()


def own_db_path(home: Path) -> Path:
    """The SQLite file hermes-core's own tables live in (see the module contract)."""
    home = Path(home)
    own = home / OWN_DB
    if own.exists():
        return own
    found = inspect_state_db(home)
    if found.owner in ("hermes-agent", "other"):
        return own
    return home / STATE_DB


def hermes_agent_state_db(home: Path) -> Path | None:
    """``<home>/state.db`` when Hermes Agent wrote it, else ``None``."""
    found = inspect_state_db(home)
    return found.path if found.is_hermes_agent else None


__all__ = [
    "HERMES_AGENT_SESSION_COLUMNS",
    "HERMES_AGENT_TABLES",
    "OWN_DB",
    "STATE_DB",
    "StateFile",
    "connect_read_only",
    "hermes_agent_state_db",
    "inspect_db_file",
    "inspect_state_db",
    "own_db_path",
]
