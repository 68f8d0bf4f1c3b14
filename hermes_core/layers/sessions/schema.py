"""The schema of ``state.db`` and its migrations.

Step ``i`` of :data:`MIGRATIONS` brings the schema from version ``i`` to ``i + 1``; each step is
idempotent (it checks before it alters), so a crash between a step and the version bump is
harmless. Migrations never drop or alter tables they do not own (other layers keep their own
tables in the same file).
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from hermes_core.layers.sessions.fts import FTS_TOKENIZER, probe_fts5
from hermes_core.layers.sessions.ingest import indexed_text
from hermes_core.statedb import KNOWN_TABLES, OWNER, SCHEMA_VERSION, incompatibility

log = logging.getLogger(__name__)

DEFAULT_INDEX_CAP = 8192
FTS_FORMAT = "1"
"""Version of :func:`~hermes_core.layers.sessions.fts.index_fields` the index was built with
(``state_meta['fts_format']``). The index stores no text (it is contentless), so removing a
row means handing FTS5 the exact text that was indexed: it is recomputed from ``messages``
with the same function and cap. A change to ``index_fields`` must bump this and add a
migration that rebuilds the index."""
FTS_TABLE_SQL = (
    "CREATE VIRTUAL TABLE messages_fts USING fts5(body, meta, content='', "
    f"tokenize='{FTS_TOKENIZER}')"
)
"""The full-text index: contentless (``content=''``), so every message text is stored once,
in ``messages``; rows are removed with the ``'delete'`` command (see :func:`fts_delete`)."""
# Whose file it is (owner mark, newest schema, known tables/columns) is decided in
# hermes_core.statedb, shared with the other layers that keep tables in state.db.


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _add_column(conn: sqlite3.Connection, table: str, column: str, decl: str) -> None:
    if column not in _columns(conn, table):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


def _m1_base(conn: sqlite3.Connection, _cap: int = DEFAULT_INDEX_CAP) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS sessions (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            user_id TEXT,
            model TEXT,
            model_config TEXT,
            system_prompt TEXT,
            parent_session_id TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            end_reason TEXT,
            message_count INTEGER NOT NULL DEFAULT 0,
            tool_call_count INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0
        )"""
    )
    conn.execute(
        """CREATE TABLE IF NOT EXISTS messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            role TEXT NOT NULL,
            content TEXT,
            tool_call_id TEXT,
            tool_calls TEXT,
            tool_name TEXT,
            timestamp REAL NOT NULL,
            token_count INTEGER
        )"""
    )
    conn.execute("CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source)")
    conn.execute("CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id)")
    conn.execute("CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC)")
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp)"
    )


def _m2_finish_reason(conn: sqlite3.Connection, _cap: int = DEFAULT_INDEX_CAP) -> None:
    _add_column(conn, "messages", "finish_reason", "TEXT")
    _add_column(conn, "messages", "reasoning", "TEXT")


def _m3_titles(conn: sqlite3.Connection, _cap: int = DEFAULT_INDEX_CAP) -> None:
    _add_column(conn, "sessions", "title", "TEXT")
    conn.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title ON sessions(title) "
        "WHERE title IS NOT NULL"
    )


def _m4_compaction_flags(conn: sqlite3.Connection, _cap: int = DEFAULT_INDEX_CAP) -> None:
    _add_column(conn, "messages", "active", "INTEGER NOT NULL DEFAULT 1")
    _add_column(conn, "messages", "compacted", "INTEGER NOT NULL DEFAULT 0")
    _add_column(conn, "messages", "name", "TEXT")
    conn.execute("CREATE INDEX IF NOT EXISTS idx_messages_session_id ON messages(session_id, id)")
    conn.execute("CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT)")


def _m5_fts(conn: sqlite3.Connection, cap: int = DEFAULT_INDEX_CAP) -> None:
    if probe_fts5(conn) is not None:
        return  # storage works without FTS; search reports why
    if _has_table(conn, "messages_fts"):
        return
    conn.execute(FTS_TABLE_SQL)  # today's (contentless) form: migration 7 has nothing to do
    reindex_fts(conn, cap=cap)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
    return row.fetchone() is not None


def is_contentless(conn: sqlite3.Connection) -> bool:
    """Whether ``messages_fts`` exists in its contentless form (schema 7)."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type='table' AND name='messages_fts'"
    ).fetchone()
    return bool(row and re.search(r"content\s*=\s*''", str(row[0])))


INDEX_SELECT = "SELECT id, content, name, tool_name, tool_calls FROM messages"
"""The ``messages`` columns :func:`~.ingest.indexed_text` needs, in its order."""


def fts_delete(conn: sqlite3.Connection, where: str, params: list[object], cap: int) -> int:
    """Remove the index rows of the messages selected by ``where`` (call it before deleting
    the messages). Returns the number of rows removed."""
    count = 0
    for row in conn.execute(f"{INDEX_SELECT} WHERE {where}", params).fetchall():
        rowid, body, meta = indexed_text(row, cap)
        conn.execute(
            "INSERT INTO messages_fts(messages_fts, rowid, body, meta) VALUES ('delete', ?, ?, ?)",
            (rowid, body, meta),
        )
        count += 1
    return count


REINDEX_CHUNK = 2000


def index_batches(conn: Any) -> Iterator[list[Any]]:
    """Every message's :data:`INDEX_SELECT` row in id order, :data:`REINDEX_CHUNK` rows at a
    time (keyset paging, so memory stays flat on a large archive). ``conn`` is any connection
    whose ``execute`` takes ``?`` parameters: SQLite's, or the PostgreSQL backend's."""
    last = -1
    while True:
        rows = conn.execute(
            f"{INDEX_SELECT} WHERE id > ? ORDER BY id LIMIT ?", (last, REINDEX_CHUNK)
        ).fetchall()
        if not rows:
            return
        yield rows
        last = int(rows[-1][0])


def reindex_fts(conn: sqlite3.Connection, *, cap: int) -> int:
    """(Re)build ``messages_fts`` from ``messages`` (in chunks of :data:`REINDEX_CHUNK` rows,
    so memory stays flat on a large archive) and record the cap and format used in
    ``state_meta``; returns the number of rows indexed."""
    if is_contentless(conn):
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('delete-all')")
    else:
        conn.execute("DELETE FROM messages_fts")
    count = 0
    for rows in index_batches(conn):
        conn.executemany(
            "INSERT INTO messages_fts(rowid, body, meta) VALUES (?, ?, ?)",
            [indexed_text(row, cap) for row in rows],
        )
        count += len(rows)
    conn.execute("CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.executemany(
        "INSERT OR REPLACE INTO state_meta(key, value) VALUES (?, ?)",
        [("fts_char_cap", str(int(cap))), ("fts_format", FTS_FORMAT)],
    )
    return count


def stored_index_cap(conn: sqlite3.Connection) -> int | None:
    """The ``index_char_cap`` the index was built with (``None`` when not recorded)."""
    if not _has_table(conn, "state_meta"):
        return None
    row = conn.execute("SELECT value FROM state_meta WHERE key='fts_char_cap'").fetchone()
    try:
        return int(row[0]) if row else None
    except (TypeError, ValueError):
        return None


def _m6_user_scope(conn: sqlite3.Connection, _cap: int = DEFAULT_INDEX_CAP) -> None:
    """User scope and turn keys: ``sessions(user_id)`` indexed (existing rows keep
    ``user_id`` NULL: the no-user scope), titles unique per user instead of globally,
    ``messages.turn_key`` unique per session (an idempotent resend of a turn is
    recognised), ``sessions.import_digest`` (a re-run import is recognised), and the owner
    mark."""
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_sessions_user ON sessions(user_id, started_at DESC)"
    )
    conn.execute("DROP INDEX IF EXISTS idx_sessions_title")
    conn.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_user_title ON "
        "sessions(COALESCE(user_id, ''), title) WHERE title IS NOT NULL"
    )
    _add_column(conn, "messages", "turn_key", "TEXT")
    _add_column(conn, "sessions", "import_digest", "TEXT")
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_sessions_import ON sessions(import_digest) "
        "WHERE import_digest IS NOT NULL"
    )
    conn.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_messages_turn_key ON messages(session_id, "
        "turn_key) WHERE turn_key IS NOT NULL"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT OR REPLACE INTO state_meta(key, value) VALUES ('owner', ?)", (OWNER,))


def _m7_text_once(conn: sqlite3.Connection, cap: int = DEFAULT_INDEX_CAP) -> None:
    """Every message text stored once: ``messages_fts`` becomes contentless (it kept a copy
    of every text, about a third of the file) and is rebuilt from ``messages``; the index
    ``idx_messages_session(session_id, timestamp)``, covered by
    ``idx_messages_session_id(session_id, id)``, is dropped. One-time; logs how many rows
    it re-indexed. Free pages are reused by later writes (``VACUUM`` returns them)."""
    conn.execute("DROP INDEX IF EXISTS idx_messages_session")
    if probe_fts5(conn) is not None or not _has_table(conn, "messages_fts"):
        return  # no index to convert; `hermes-memory sessions reindex` builds it when FTS5 works
    if is_contentless(conn):
        return
    conn.execute("DROP TABLE messages_fts")
    conn.execute(FTS_TABLE_SQL)
    count = reindex_fts(conn, cap=cap)
    log.warning(
        "state.db upgraded to schema 7: full-text index rebuilt without a second copy of "
        "the text (%d messages)",
        count,
    )


MIGRATIONS: tuple[Callable[..., None], ...] = (
    _m1_base,
    _m2_finish_reason,
    _m3_titles,
    _m4_compaction_flags,
    _m5_fts,
    _m6_user_scope,
    _m7_text_once,
)
"""Step ``i`` brings the schema from version ``i`` to ``i + 1``. Each step is idempotent (it
checks before it alters), so a crash between a step and the version bump is harmless. Steps
are called ``step(conn, index_char_cap)``; those that build the full-text index use the cap."""


def read_schema_version(conn: sqlite3.Connection) -> int:
    """The stored schema version (0 for a fresh database). Never writes."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: sqlite3.Connection, *, index_char_cap: int = DEFAULT_INDEX_CAP) -> int:
    """Apply every missing migration step in its own transaction; returns the new version.
    Never touches tables it does not own. ``index_char_cap`` is used when a step (re)builds
    the full-text index."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    version = read_schema_version(conn)
    while version < len(MIGRATIONS):
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = read_schema_version(conn)  # another process may have migrated
            if current > version:
                conn.execute("COMMIT")
                version = current
                continue
            MIGRATIONS[version](conn, index_char_cap)
            conn.execute("DELETE FROM schema_version")
            conn.execute("INSERT INTO schema_version(version) VALUES (?)", (version + 1,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        version += 1
    return version


def create_fts_table(conn: sqlite3.Connection) -> None:
    """Create ``messages_fts`` (the caller checked that it is missing and FTS5 works)."""
    conn.execute(FTS_TABLE_SQL)


__all__ = [
    "DEFAULT_INDEX_CAP",
    "FTS_FORMAT",
    "FTS_TABLE_SQL",
    "INDEX_SELECT",
    "KNOWN_TABLES",
    "MIGRATIONS",
    "OWNER",
    "SCHEMA_VERSION",
    "create_fts_table",
    "fts_delete",
    "incompatibility",
    "indexed_text",
    "is_contentless",
    "migrate",
    "read_schema_version",
    "reindex_fts",
    "stored_index_cap",
]
