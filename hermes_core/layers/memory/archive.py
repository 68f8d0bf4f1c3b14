"""Overflow archive: entries moved out of MEMORY.md / USER.md instead of being dropped.

With ``memory.overflow: archive``, an add that would overflow moves the oldest entries (the
ones the agent marked ``priority: "low"`` first) into the ``memory_archive`` table of
``$HERMES_HOME/state.db``. Nothing is deleted: archived rows stay searchable (the read-only
``memory_archive`` tool, ``hermes-memory memory archive``) and restorable (``hermes-memory memory
restore
ID``).

The table is created here, idempotently, on this module's own connection (WAL,
``busy_timeout``); it shares the file with the session archive but no code with it. Low
priority marks live in ``memory_priority``.

Rows are scoped like the files they came from: ``user_id`` is the owner of the file
(``MemoryScope.owner``; ``""`` for the no-user files) and every read, restore and mark of a
:class:`MemoryArchive` is filtered by its scope, so one user never sees, restores or
reprioritises another's entries. Tables from before scopes get the column (``""``) on open.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from hermes_core.fsutil import ensure_private_dir
from hermes_core.homefiles import own_db_path
from hermes_core.statedb import write_refusal
from hermes_core.text import like_escape
from hermes_core.types import MemoryTarget

from .scope import MemoryScope

PRIORITY_COLUMNS = """(
    user_id TEXT NOT NULL DEFAULT '',
    target TEXT NOT NULL,
    content TEXT NOT NULL,
    priority TEXT NOT NULL,
    marked_at REAL NOT NULL,
    PRIMARY KEY (user_id, target, content)
)"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS memory_archive (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    target TEXT NOT NULL,
    content TEXT NOT NULL,
    archived_at REAL NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    priority TEXT NOT NULL DEFAULT 'normal',
    session_id TEXT,
    restored_at REAL,
    user_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS idx_memory_archive_target ON memory_archive(target, archived_at);
CREATE TABLE IF NOT EXISTS memory_priority {PRIORITY_COLUMNS};
CREATE TABLE IF NOT EXISTS memory_expiry (
    user_id TEXT NOT NULL DEFAULT '',
    target TEXT NOT NULL,
    content TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (user_id, target, content)
);
"""

MIGRATE_PRIORITY = f"""
CREATE TABLE memory_priority_scoped {PRIORITY_COLUMNS};
INSERT INTO memory_priority_scoped (user_id, target, content, priority, marked_at)
    SELECT '', target, content, priority, marked_at FROM memory_priority;
DROP TABLE memory_priority;
ALTER TABLE memory_priority_scoped RENAME TO memory_priority;
"""


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def _scoped(conn: sqlite3.Connection) -> bool:
    """True when both tables have the ``user_id`` scope and its index."""
    index = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'idx_memory_archive_user'"
    ).fetchone()
    return (
        index is not None
        and "user_id" in _columns(conn, "memory_archive")
        and "user_id" in _columns(conn, "memory_priority")
    )


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the ``user_id`` scope to tables created before it, in one write transaction (and
    only when needed: a concurrent opener that migrated first leaves nothing to do)."""
    if _scoped(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if "user_id" not in _columns(conn, "memory_archive"):
            conn.execute("ALTER TABLE memory_archive ADD COLUMN user_id TEXT NOT NULL DEFAULT ''")
        if "user_id" not in _columns(conn, "memory_priority"):
            for statement in MIGRATE_PRIORITY.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(
            "CREATE INDEX IF NOT EXISTS idx_memory_archive_user "
            "ON memory_archive(user_id, target, archived_at)"
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class ArchiveUnavailable(sqlite3.OperationalError):
    """``state.db`` must not be written (another program's file, a newer schema, a FIFO…);
    the message says why and how to fix it."""


@dataclass(frozen=True)
class ArchivedEntry:
    """One archived entry; ``restored_at`` is set once it went back into its file."""

    id: int
    target: str
    content: str
    archived_at: float
    reason: str
    priority: str = "normal"
    session_id: str | None = None
    restored_at: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "target": self.target,
            "content": self.content,
            "archived_at": self.archived_at,
            "reason": self.reason,
            "priority": self.priority,
            "session_id": self.session_id,
            "restored_at": self.restored_at,
        }


def db_path(home: Path) -> Path:
    """hermes-core's own database in ``home`` (``state.db``, or ``hermes_core.db`` beside a
    Hermes Agent ``state.db``, which is never written: :mod:`hermes_core.homefiles`)."""
    return own_db_path(home)


def _make_private(path: Path) -> None:
    """``state.db`` and its WAL sidecars are 0600 (it holds conversations)."""
    for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(OSError):
            if candidate.exists() and candidate.stat().st_mode & 0o077:
                os.chmod(candidate, 0o600)


class MemoryArchive:
    """The archive tables of ``state.db`` as one :class:`MemoryScope` sees them. Every call
    opens and closes its own connection."""

    def __init__(self, home: Path, scope: MemoryScope | None = None) -> None:
        self.home = home
        self.scope = scope or MemoryScope()
        self._ready = False

    def _owner(self, target: str) -> str:
        return self.scope.owner(cast(MemoryTarget, target)) or ""

    def _visible(self) -> tuple[str, list[object]]:
        """The WHERE clause (and its parameters) of the rows this scope may see."""
        return (
            "((target = 'memory' AND user_id = ?) OR (target = 'user' AND user_id = ?))",
            [self._owner("memory"), self._owner("user")],
        )

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection with WAL and a busy timeout; commits on success, rolls back on error."""
        ensure_private_dir(self.home)
        if not self._ready:
            refusal = write_refusal(db_path(self.home))  # never another program's file
            if refusal is not None:
                raise ArchiveUnavailable(f"the memory archive is unavailable: {refusal}")
        with closing(sqlite3.connect(db_path(self.home), timeout=30.0)) as conn:
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA synchronous = FULL")
            if not self._ready:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(SCHEMA)
                _migrate(conn)
                _make_private(db_path(self.home))
                self._ready = True
            conn.row_factory = sqlite3.Row
            with conn:
                yield conn

    # -- writing

    def add(
        self,
        target: MemoryTarget,
        contents: Sequence[str],
        *,
        reason: str,
        priorities: Sequence[str] | None = None,
        session_id: str | None = None,
    ) -> list[int]:
        """Archive ``contents`` (in order); returns the new row ids."""
        now = time.time()
        ids: list[int] = []
        with self.connect() as conn:
            for index, content in enumerate(contents):
                priority = priorities[index] if priorities else "normal"
                cur = conn.execute(
                    "INSERT INTO memory_archive (target, content, archived_at, reason, priority,"
                    " session_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (target, content, now, reason, priority, session_id, self._owner(target)),
                )
                ids.append(int(cur.lastrowid or 0))
        return ids

    def delete(self, ids: Sequence[int]) -> None:
        """Undo :meth:`add` (used when the file write that followed it failed)."""
        visible, params = self._visible()
        with self.connect() as conn:
            conn.executemany(
                f"DELETE FROM memory_archive WHERE id = ? AND {visible}",
                [(i, *params) for i in ids],
            )

    def mark_restored(self, entry_id: int) -> None:
        visible, params = self._visible()
        with self.connect() as conn:
            conn.execute(
                f"UPDATE memory_archive SET restored_at = ? WHERE id = ? AND {visible}",
                (time.time(), entry_id, *params),
            )

    def set_priority(self, target: MemoryTarget, content: str, priority: str) -> None:
        """Remember ``priority`` of a live entry (``normal`` forgets the mark)."""
        with self.connect() as conn:
            if priority == "normal":
                conn.execute(
                    "DELETE FROM memory_priority WHERE user_id = ? AND target = ? AND content = ?",
                    (self._owner(target), target, content),
                )
            else:
                conn.execute(
                    "INSERT OR REPLACE INTO memory_priority (user_id, target, content, priority, "
                    "marked_at) VALUES (?, ?, ?, ?, ?)",
                    (self._owner(target), target, content, priority, time.time()),
                )

    def set_expiry(self, target: MemoryTarget, content: str, expires_at: float | None) -> None:
        """Give the live entry ``content`` an expiry (epoch seconds), or none (``None``).
        An expired entry stays in its file but leaves the prompt (:meth:`expired`)."""
        with self.connect() as conn:
            conn.execute(
                "DELETE FROM memory_expiry WHERE user_id = ? AND target = ? AND content = ?",
                (self._owner(target), target, content),
            )
            if expires_at is not None:
                conn.execute(
                    "INSERT INTO memory_expiry (user_id, target, content, expires_at) "
                    "VALUES (?, ?, ?, ?)",
                    (self._owner(target), target, content, float(expires_at)),
                )

    def expiries(self, target: MemoryTarget) -> dict[str, float]:
        """``{entry: expires_at}`` of ``target``'s entries that carry an expiry."""
        if not db_path(self.home).exists():
            return {}
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT content, expires_at FROM memory_expiry WHERE user_id = ? AND target = ?",
                (self._owner(target), target),
            ).fetchall()
        return {str(r[0]): float(r[1]) for r in rows}

    def expired(self, target: MemoryTarget, now: float | None = None) -> set[str]:
        """Entries of ``target`` whose expiry has passed."""
        moment = time.time() if now is None else now
        return {c for c, at in self.expiries(target).items() if at <= moment}

    # -- reading

    def low_priority(self, target: MemoryTarget) -> set[str]:
        """Contents of live entries marked low priority."""
        if not db_path(self.home).exists():
            return set()
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT content FROM memory_priority WHERE user_id = ? AND target = ? "
                "AND priority = 'low'",
                (self._owner(target), target),
            ).fetchall()
        return {str(row["content"]) for row in rows}

    def get(self, entry_id: int) -> ArchivedEntry | None:
        if not db_path(self.home).exists():
            return None
        visible, params = self._visible()
        with self.connect() as conn:
            row = conn.execute(
                f"SELECT * FROM memory_archive WHERE id = ? AND {visible}", (entry_id, *params)
            ).fetchone()
        return _entry(row) if row else None

    def list(
        self,
        *,
        target: str | None = None,
        query: str | None = None,
        include_restored: bool = False,
        limit: int = 50,
    ) -> list[ArchivedEntry]:
        """Archived entries, newest first; ``query`` matches words as substrings (CJK too).

        Every whitespace-separated term of ``query`` must occur (case-insensitive).
        """
        if not db_path(self.home).exists():
            return []
        visible, params = self._visible()
        clauses: list[str] = [visible]
        if target:
            clauses.append("target = ?")
            params.append(target)
        if not include_restored:
            clauses.append("restored_at IS NULL")
        for term in (query or "").split():
            clauses.append("content LIKE ? ESCAPE '\\'")
            params.append(f"%{like_escape(term)}%")
        where = f"WHERE {' AND '.join(clauses)}"
        params.append(max(1, min(limit, 500)))
        with self.connect() as conn:
            rows = conn.execute(
                f"SELECT * FROM memory_archive {where} ORDER BY archived_at DESC, id DESC LIMIT ?",
                params,
            ).fetchall()
        return [_entry(row) for row in rows]

    def mentioning(
        self, needle: str
    ) -> tuple[builtins.list[ArchivedEntry], builtins.list[tuple[str, str]]]:
        """Every row this scope sees whose content contains ``needle`` (case-folded, CJK
        too): archived entries (restored ones included) and the low-priority and expiry
        marks ``(target, content)``. For "forget a subject"."""
        if not db_path(self.home).exists():
            return [], []
        visible, params = self._visible()
        with self.connect() as conn:
            rows = conn.execute(f"SELECT * FROM memory_archive WHERE {visible}", params).fetchall()
            marks = conn.execute(
                "SELECT target, content FROM memory_priority WHERE "
                "(target = 'memory' AND user_id = ?) OR (target = 'user' AND user_id = ?)",
                params,
            ).fetchall()
            expiring = conn.execute(
                "SELECT target, content FROM memory_expiry WHERE "
                "(target = 'memory' AND user_id = ?) OR (target = 'user' AND user_id = ?)",
                params,
            ).fetchall()
        entries = [_entry(row) for row in rows if needle in str(row["content"]).casefold()]
        found = sorted(
            {(str(m[0]), str(m[1])) for m in [*marks, *expiring] if needle in str(m[1]).casefold()}
        )
        return entries, found

    def purge(self, ids: Sequence[int], marks: Sequence[tuple[str, str]]) -> None:
        """Delete archived rows ``ids`` and priority marks ``marks`` of this scope."""
        self.delete(ids)
        with self.connect() as conn:
            for table in ("memory_priority", "memory_expiry"):
                conn.executemany(
                    f"DELETE FROM {table} WHERE user_id = ? AND target = ? AND content = ?",
                    [(self._owner(target), target, content) for target, content in marks],
                )

    def purge_scope(self) -> int:
        """Delete every archived row and priority mark this scope sees; returns the rows."""
        if not db_path(self.home).exists():
            return 0
        visible, params = self._visible()
        with self.connect() as conn:
            count = conn.execute(f"DELETE FROM memory_archive WHERE {visible}", params).rowcount
            for table in ("memory_priority", "memory_expiry"):
                conn.execute(
                    f"DELETE FROM {table} WHERE "
                    "(target = 'memory' AND user_id = ?) OR (target = 'user' AND user_id = ?)",
                    params,
                )
        return int(count)

    def users(self) -> builtins.list[tuple[str, int, float]]:
        """``(user_id, rows, newest archived_at)`` of every owner in the archive (all
        scopes: for the inspector's people list, never for a user's own view)."""
        if not db_path(self.home).exists():
            return []
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT user_id, COUNT(*), MAX(archived_at) FROM memory_archive GROUP BY user_id"
            ).fetchall()
        return [(str(r[0]), int(r[1]), float(r[2] or 0.0)) for r in rows]


def _entry(row: sqlite3.Row) -> ArchivedEntry:
    return ArchivedEntry(
        id=int(row["id"]),
        target=str(row["target"]),
        content=str(row["content"]),
        archived_at=float(row["archived_at"]),
        reason=str(row["reason"]),
        priority=str(row["priority"]),
        session_id=row["session_id"],
        restored_at=row["restored_at"],
    )


def choose_evictions(
    entries: Sequence[str],
    *,
    fits: Callable[[list[str]], bool],
    protected: set[str],
    low_priority: set[str],
) -> list[str] | None:
    """Entries to move out of ``entries`` until ``fits(remaining)`` holds.

    Low-priority entries go first, then the oldest (file order); ``protected`` entries (the
    ones being written) never move. Returns ``[]`` when it already fits and ``None`` when even
    archiving everything movable would not be enough.
    """
    remaining = list(entries)
    if fits(remaining):
        return []
    order = [e for e in entries if e in low_priority and e not in protected]
    order += [e for e in entries if e not in low_priority and e not in protected]
    chosen: list[str] = []
    for entry in order:
        remaining.remove(entry)
        chosen.append(entry)
        if fits(remaining):
            return chosen
    return None


__all__ = ["ArchiveUnavailable", "ArchivedEntry", "MemoryArchive", "choose_evictions", "db_path"]
