"""The session archive: ``$HERMES_HOME/state.db`` (SQLite, WAL, FTS5) — the database class.

The schema and its migrations live in :mod:`.schema`, the row records and their pure helpers
in :mod:`.records`, the file checks in :mod:`.files`, the preparation of message rows in
:mod:`.ingest`, the errors in :mod:`.errors`; their public names used by callers are
re-exported here, so ``from hermes_core.layers.sessions.db import SessionRecord`` keeps working.

Contract:

* One :class:`SessionDB` per database path and process (``SessionDB.open(home)``); it is
  thread-safe (one connection per thread). Other layers keep their own tables in the same file
  (``memory_archive``, ``compression_events``, ``skill_outcomes``); migrations here never
  drop or alter unknown tables.
* Files are private: ``state.db`` and its ``-wal``/``-shm`` sidecars are 0600.
* Writes use ``BEGIN IMMEDIATE`` with a 1 s busy timeout and an application retry with
  20-150 ms jitter (up to 60 s in total), so concurrent writers (CLI, gateway, 4 processes)
  never see "database is locked"; only a writer blocked for a whole minute gets
  :class:`SessionStoreBusy`. A PASSIVE WAL checkpoint runs every 50 writes.
* Every write is committed before the method returns (durable: ``synchronous=FULL``).
* Messages carry ``active``/``compacted`` flags: live rows are ``active=1``; rows the
  compressor archived are ``active=0, compacted=1`` (see :meth:`SessionDB.mark_compacted`);
  rewound/undone rows are ``active=0, compacted=0``.
* Lineage: ``sessions.parent_session_id`` links a continuation to its parent (compression
  rotation, ``/new``); :meth:`SessionDB.lineage` walks it.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.homefiles import own_db_path
from hermes_core.layers.sessions.archive import MAX_REF_CHARS, ArchiveBase, SessionStore
from hermes_core.layers.sessions.errors import (
    SessionStoreBusy,
    SessionStoreError,
    SessionStoreReadOnly,
    SessionStoreUnusable,
)
from hermes_core.layers.sessions.files import (
    PRIVATE_MODE,
    check_file,
    create_private,
    tighten_permissions,
    unusable,
)
from hermes_core.layers.sessions.fts import FTS_WEIGHTS, probe_fts5
from hermes_core.layers.sessions.ingest import INSERT_COLUMNS, MessageRow
from hermes_core.layers.sessions.records import (
    ALL_USERS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TITLE_MAX,
    SessionRecord,
    StoredMessage,
    UserScope,
    content_text,
    message_from_row,
    sanitize_title,
    scope_sql,
    session_from_row,
    tool_call_parts,
)
from hermes_core.layers.sessions.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    create_fts_table,
    fts_delete,
    incompatibility,
    migrate,
    read_schema_version,
    reindex_fts,
    stored_index_cap,
)

DB_FILE = "state.db"
BUSY_TIMEOUT_MS = 1000
READ_BUSY_TIMEOUT_MS = 5000
RETRY_JITTER_S = (0.020, 0.150)
RETRY_DEADLINE_S = 60.0
CHECKPOINT_EVERY = 50
OVERFETCH = 3
"""Rows ranked by FTS5 alone per candidate needed, before the join applies the filters."""

T = TypeVar("T")


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


class SessionDB(ArchiveBase):
    """The SQLite archive at ``path``. Create with :meth:`open`; close with :meth:`close`.
    The shared behaviour lives in :class:`~.archive.ArchiveBase`."""

    backend = "sqlite"
    SEQ = "s.rowid"
    LIKE_CI = "LIKE"
    UNINDEXED = "+"

    def __init__(
        self, path: Path, *, index_char_cap: int = 8192, redact_secrets: bool = True
    ) -> None:
        self.path = Path(path)
        self.configured_index_char_cap = index_char_cap
        self.index_char_cap = index_char_cap
        """The cap the full-text index is built with: the one recorded in ``state.db`` (a
        contentless index must be handed the exact text it indexed to remove a row), else
        the configured one. :meth:`reindex` applies a changed configuration."""
        self.redact_secrets = redact_secrets
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._writes = 0
        super().__init__()
        self.read_only_reason: str | None = None
        check_file(self.path)
        create_private(self.path)
        self.read_only_reason = self._whose_file()
        conn = self._conn()
        self.fts_error: str | None = probe_fts5(conn)
        if self.read_only_reason is None:
            self._retry(lambda: migrate(conn, index_char_cap=index_char_cap))
            tighten_permissions(self.path)
        self.index_char_cap = stored_index_cap(conn) or index_char_cap
        self.fts_enabled = self.fts_error is None and self._has_table(conn, "messages_fts")
        if self.fts_error is None and not self.fts_enabled:
            self.fts_error = "messages_fts is missing; run `hermes-memory sessions reindex`."

    @classmethod
    def open(
        cls, home: Path, *, index_char_cap: int = 8192, redact_secrets: bool = True
    ) -> SessionDB:
        """The archive of a Hermes home: ``<home>/state.db`` (created 0600 when missing), or
        ``<home>/hermes_core.db`` when ``state.db`` is Hermes Agent's (never written; see
        :mod:`hermes_core.homefiles` and :mod:`.hermes_agent`).
        Raises :class:`SessionStoreUnusable` when the file cannot be used (the message says
        how to fix it); a newer or foreign file opens read-only (:attr:`read_only_reason`)."""
        return cls(
            own_db_path(Path(home)), index_char_cap=index_char_cap, redact_secrets=redact_secrets
        )

    @property
    def location(self) -> str:
        """Where the archive lives (the file path), for messages and ``stats``."""
        return str(self.path)

    def _whose_file(self) -> str | None:
        """Read-only reason for a newer/foreign file (never writes), or ``None``."""
        try:
            probe = sqlite3.connect(self.path, timeout=READ_BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as exc:
            raise unusable(self.path, str(exc)) from exc
        try:
            reason = self._retry(lambda: incompatibility(probe))
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and _is_locked(exc):
                raise
            raise unusable(self.path, str(exc)) from exc
        finally:
            probe.close()
        if reason is None:
            return None
        return (
            f"{self.path} is opened read-only: {reason}. hermes-core never writes to it; "
            "give hermes-core a home of its own (HERMES_HOME=~/.hermes-core) or move the "
            f"file aside (mv {self.path} {self.path}.other)"
        )

    # -- connections ---------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout={READ_BUSY_TIMEOUT_MS}")
            if self.read_only_reason is not None:
                conn.execute("PRAGMA query_only=ON")
            else:
                new_conn = conn
                self._retry(lambda: new_conn.execute("PRAGMA journal_mode=WAL"))
                conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=OFF")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this object opened (all threads)."""
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    def __enter__(self) -> SessionDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _has_table(conn: sqlite3.Connection, name: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name=? AND type IN ('table','view')", (name,)
        ).fetchone()
        return row is not None

    def has_table(self, name: str) -> bool:
        """Whether ``state.db`` has a table called ``name`` (other layers' tables too)."""
        return self._has_table(self._conn(), name)

    @staticmethod
    def _retry(fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + RETRY_DEADLINE_S
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc):
                    raise
                if time.monotonic() > deadline:
                    raise SessionStoreBusy(
                        "state.db stayed locked by another writer for "
                        f"{RETRY_DEADLINE_S:.0f}s; close other hermes processes or check "
                        "for a stuck one (`fuser state.db`)."
                    ) from exc
                time.sleep(random.uniform(*RETRY_JITTER_S))

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in a ``BEGIN IMMEDIATE`` transaction with jittered retry.
        Committed (durably) before returning. Public so other layers' tables in state.db
        can share the same contention handling. Raises :class:`SessionStoreReadOnly` on a
        file opened read-only."""
        if self.read_only_reason is not None:
            raise SessionStoreReadOnly(self.read_only_reason)
        conn = self._conn()
        if getattr(self._local, "in_transaction", False):
            return fn(conn)  # inside transaction(): committed (or not) with the rest
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

        def attempt() -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            return result

        try:
            result = self._retry(attempt)
        finally:
            conn.execute(f"PRAGMA busy_timeout={READ_BUSY_TIMEOUT_MS}")
        self._writes += 1
        if self._writes % CHECKPOINT_EVERY == 0:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        return result

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes: every :meth:`write` (and every method that writes) of this thread
        inside the block joins one ``BEGIN IMMEDIATE`` transaction, committed when the block
        ends, rolled back when it raises — and never committed if the process dies first.
        Nested blocks join the outer one."""
        if self.read_only_reason is not None:
            raise SessionStoreReadOnly(self.read_only_reason)
        if getattr(self._local, "in_transaction", False):
            yield
            return
        conn = self._conn()
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        try:
            self._retry(lambda: conn.execute("BEGIN IMMEDIATE"))
            self._local.in_transaction = True
            try:
                yield
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            finally:
                self._local.in_transaction = False
        finally:
            conn.execute(f"PRAGMA busy_timeout={READ_BUSY_TIMEOUT_MS}")
        self._writes += 1

    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        """Run a read-only query; returns all rows."""
        return self._retry(lambda: self._conn().execute(sql, params).fetchall())

    # -- sessions --------------------------------------------------------------------

    def _insert_messages(
        self, conn: sqlite3.Connection, rows: Sequence[MessageRow], turn_key: str | None
    ) -> list[int]:
        ids: list[int] = []
        for position, row in enumerate(rows):
            cur = conn.execute(
                f"INSERT INTO messages({INSERT_COLUMNS}, turn_key) "
                f"VALUES ({','.join('?' * (len(row.values) + 1))})",
                (*row.values, turn_key if position == 0 else None),
            )
            rowid = int(cur.lastrowid or 0)
            ids.append(rowid)
            if self.fts_enabled:
                conn.execute(
                    "INSERT INTO messages_fts(rowid, body, meta) VALUES (?, ?, ?)",
                    (rowid, row.body, row.meta),
                )
        return ids

    def _index_message(
        self, conn: sqlite3.Connection, message_id: int, body: str, meta: str
    ) -> None:
        if self.fts_enabled:
            conn.execute(
                "INSERT INTO messages_fts(rowid, body, meta) VALUES (?, ?, ?)",
                (message_id, body, meta),
            )

    # -- full-text index (FTS5) ---------------------------------------------------------

    def fts_count(self, match: str, floor: int = 0, cap: int | None = None) -> int:
        """Index rows matching the FTS5 expression ``match`` with ids above ``floor``; with
        ``cap``, counting stops there (the cost is bounded by ``cap``, not by the matches)."""
        if cap is not None:
            return int(
                self.read(
                    "SELECT COUNT(*) FROM (SELECT rowid FROM messages_fts "
                    "WHERE messages_fts MATCH ? AND rowid > ? LIMIT ?)",
                    (match, floor, int(cap)),
                )[0][0]
            )
        return int(
            self.read(
                "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ? AND rowid > ?",
                (match, floor),
            )[0][0]
        )

    def fts_rowids(self, match: str, floor: int = 0) -> list[int]:
        """Ids of the messages matching ``match`` above ``floor``."""
        rows = self.read(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid > ?",
            (match, floor),
        )
        return [int(r[0]) for r in rows]

    def fts_window_rows(
        self, match: str, floor: int, where: str, params: Sequence[Any]
    ) -> list[tuple[Any, ...]]:
        """Rows ``(id, session_id, 0, timestamp, token_count)`` of the matches above
        ``floor`` passing ``where`` (SQL over ``m`` messages and ``s`` sessions)."""
        return self.read(
            "SELECT m.id, m.session_id, 0, m.timestamp, m.token_count FROM messages m "
            "JOIN sessions s ON s.id = m.session_id WHERE m.id IN (SELECT rowid FROM "
            f"messages_fts WHERE messages_fts MATCH ? AND rowid > ?) AND {where}",
            [match, floor, *params],
        )

    def fts_ranked(
        self, match: str, where: str, params: Sequence[Any], limit: int
    ) -> tuple[list[tuple[Any, ...]], int | None]:
        """The best ``limit`` rows by ``bm25()`` passing ``where`` and the number of index
        rows matching (``None`` when not counted). FTS5 ranks on its own (cheap: no join per
        match), then the top ``limit * OVERFETCH`` rows are joined and filtered; only when
        the filters removed so many that fewer than ``limit`` remain while more matches exist
        does the slower join-everything query run."""
        w_body, w_meta = FTS_WEIGHTS
        inner = int(limit) * OVERFETCH
        rows = self.read(
            "WITH top AS (SELECT rowid AS id, "
            f"bm25(messages_fts, {w_body}, {w_meta}) AS r FROM messages_fts "
            "WHERE messages_fts MATCH ? ORDER BY r LIMIT ?) "
            "SELECT top.id, m.session_id, top.r, m.timestamp, m.token_count FROM top "
            "JOIN messages m ON m.id = top.id JOIN sessions s ON s.id = m.session_id "
            f"WHERE {where} ORDER BY top.r LIMIT ?",
            [match, inner, *params, int(limit)],
        )
        total = None
        if len(rows) < limit:
            total = self.fts_count(match)
            if total > inner:
                rows = self.read(
                    f"SELECT f.rowid, m.session_id, bm25(messages_fts, {w_body}, {w_meta}) AS r, "
                    "m.timestamp, m.token_count FROM messages_fts f "
                    "JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id "
                    f"WHERE messages_fts MATCH ? AND {where} ORDER BY r LIMIT ?",
                    [match, *params, int(limit)],
                )
        return rows, total

    def month_sql(self, column: str) -> str:
        """SQL for the local-time month (1-12) of an epoch-seconds ``column``."""
        return f"CAST(strftime('%m', {column}, 'unixepoch', 'localtime') AS INTEGER)"

    def schema_version(self) -> int:
        """The schema version recorded in the file."""
        return read_schema_version(self._conn())

    # -- maintenance -----------------------------------------------------------------

    def delete_sessions(self, session_ids: Sequence[str]) -> int:
        """Delete sessions with their messages and index rows; children are re-parented to
        nothing (their ``parent_session_id`` is kept as a dangling reference). Returns the
        number of messages removed."""
        ids = list(session_ids)
        if not ids:
            return 0

        def do(conn: sqlite3.Connection) -> int:
            removed = 0
            for start in range(0, len(ids), 200):
                chunk = ids[start : start + 200]
                marks = ",".join("?" * len(chunk))
                if self.fts_enabled:
                    fts_delete(conn, f"session_id IN ({marks})", list(chunk), self.index_char_cap)
                removed += conn.execute(
                    f"DELETE FROM messages WHERE session_id IN ({marks})", chunk
                ).rowcount
                conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
            self._speakers.clear()
            return removed

        return self.write(do)

    def reindex(self) -> int:
        """Rebuild the full-text index from the messages table with the configured
        ``index_char_cap`` (recorded in the file)."""
        if self.fts_error is not None and not self.fts_enabled:
            raise SessionStoreError(self.fts_error)

        def do(conn: sqlite3.Connection) -> int:
            if not self._has_table(conn, "messages_fts"):
                create_fts_table(conn)
            return reindex_fts(conn, cap=self.configured_index_char_cap)

        count = self.write(do)
        self.index_char_cap = self.configured_index_char_cap
        self.fts_enabled = True
        self.fts_error = None
        return count

    def stats(self, *, user_id: UserScope) -> dict[str, Any]:
        """Counts of ``user_id``'s scope, the file's size and (when the compression layer's
        table exists) compression totals."""
        conn = self._conn()
        scope, p = scope_sql(user_id)
        sessions = conn.execute(f"SELECT COUNT(*) FROM sessions WHERE {scope}", p).fetchone()[0]
        messages, compacted = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(compacted), 0) FROM messages WHERE session_id IN "
            f"(SELECT id FROM sessions WHERE {scope})",
            p,
        ).fetchone()
        by_source = dict(
            conn.execute(
                f"SELECT source, COUNT(*) FROM sessions WHERE {scope} GROUP BY source", p
            ).fetchall()
        )
        tokens = conn.execute(
            "SELECT COALESCE(SUM(input_tokens),0), COALESCE(SUM(output_tokens),0), "
            f"COALESCE(SUM(tool_call_count),0) FROM sessions WHERE {scope}",
            p,
        ).fetchone()
        size = sum(
            Path(str(self.path) + s).stat().st_size
            for s in ("", "-wal", "-shm")
            if Path(str(self.path) + s).exists()
        )
        out: dict[str, Any] = {
            "path": str(self.path),
            "schema_version": self.schema_version(),
            "read_only": self.read_only_reason,
            "fts": self.fts_enabled,
            "index_char_cap": self.index_char_cap,
            "sessions": sessions,
            "messages": messages,
            "compacted_messages": compacted,
            "by_source": by_source,
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "tool_calls": tokens[2],
            "size_bytes": size,
        }
        if self._has_table(conn, "compression_events"):
            try:
                row = conn.execute(
                    "SELECT COUNT(*), COALESCE(SUM(tokens_before),0), "
                    "COALESCE(SUM(tokens_after),0), COALESCE(SUM(fallback_used),0), "
                    "COALESCE(SUM(aborted),0) FROM compression_events"
                ).fetchone()
                out["compression"] = {
                    "events": row[0],
                    "tokens_before": row[1],
                    "tokens_after": row[2],
                    "fallback_used": row[3],
                    "aborted": row[4],
                }
            except sqlite3.Error as exc:
                out["compression"] = {"error": str(exc)}
        return out


__all__ = [
    "ALL_USERS",
    "DB_FILE",
    "MAX_REF_CHARS",
    "MESSAGE_COLUMNS",
    "MIGRATIONS",
    "PRIVATE_MODE",
    "SCHEMA_VERSION",
    "SESSION_COLUMNS",
    "TITLE_MAX",
    "SessionDB",
    "SessionRecord",
    "SessionStore",
    "SessionStoreBusy",
    "SessionStoreError",
    "SessionStoreReadOnly",
    "SessionStoreUnusable",
    "StoredMessage",
    "UserScope",
    "check_file",
    "content_text",
    "message_from_row",
    "migrate",
    "read_schema_version",
    "sanitize_title",
    "session_from_row",
    "tighten_permissions",
    "tool_call_parts",
]
