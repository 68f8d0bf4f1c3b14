"""The session archive: ``$HERMES_HOME/state.db`` (SQLite, WAL, FTS5) — the database class.

The schema and its migrations live in :mod:`.schema`, the row records and their pure helpers
in :mod:`.records`, the errors in :mod:`.errors`; every public name of those modules is
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
import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.layers.sessions.errors import SessionStoreBusy, SessionStoreError
from hermes_core.layers.sessions.fts import index_fields, probe_fts5
from hermes_core.layers.sessions.records import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TITLE_MAX,
    SessionRecord,
    StoredMessage,
    content_text,
    message_from_row,
    sanitize_title,
    session_from_row,
    tool_call_parts,
)
from hermes_core.layers.sessions.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    create_fts_table,
    migrate,
    read_schema_version,
    reindex_fts,
)
from hermes_core.llm.tokens import estimate_message_tokens

DB_FILE = "state.db"
BUSY_TIMEOUT_MS = 1000
READ_BUSY_TIMEOUT_MS = 5000
RETRY_JITTER_S = (0.020, 0.150)
RETRY_DEADLINE_S = 60.0
CHECKPOINT_EVERY = 50
PRIVATE_MODE = 0o600

T = TypeVar("T")


def _create_private(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_MODE)
    os.close(fd)


def tighten_permissions(db_path: Path) -> list[Path]:
    """chmod 0600 the db and its sidecars; returns the files that were looser."""
    fixed: list[Path] = []
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = Path(str(db_path) + suffix)
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_mode & 0o077:
                os.chmod(path, PRIVATE_MODE)
                fixed.append(path)
    return fixed


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


class SessionDB:
    """The archive at ``path``. Create with :meth:`open`; close with :meth:`close`."""

    def __init__(self, path: Path, *, index_char_cap: int = 8192) -> None:
        self.path = Path(path)
        self.index_char_cap = index_char_cap
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._writes = 0
        self._speakers: tuple[int, frozenset[str]] | None = None
        _create_private(self.path)
        conn = self._conn()
        self.fts_error: str | None = probe_fts5(conn)
        self._retry(lambda: migrate(conn))
        tighten_permissions(self.path)
        self.fts_enabled = self.fts_error is None and self._has_table(conn, "messages_fts")
        if self.fts_error is None and not self.fts_enabled:
            self.fts_error = "messages_fts is missing; run `hermes sessions reindex`."

    @classmethod
    def open(cls, home: Path, *, index_char_cap: int = 8192) -> SessionDB:
        """The archive of a Hermes home: ``<home>/state.db`` (created 0600 when missing)."""
        return cls(Path(home) / DB_FILE, index_char_cap=index_char_cap)

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
        can share the same contention handling."""
        conn = self._conn()
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

    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        """Run a read-only query; returns all rows."""
        return self._retry(lambda: self._conn().execute(sql, params).fetchall())

    # -- sessions --------------------------------------------------------------------

    def schema_version(self) -> int:
        """The schema version recorded in the file."""
        return read_schema_version(self._conn())

    def create_session(
        self,
        session_id: str,
        *,
        source: str = "cli",
        user_id: str | None = None,
        model: str | None = None,
        parent_session_id: str | None = None,
        started_at: float | None = None,
        title: str | None = None,
        system_prompt: str | None = None,
        model_config: Mapping[str, Any] | None = None,
    ) -> None:
        """Insert the session row; a second call for the same id only fills missing fields
        (so reopening a session is harmless)."""
        if not session_id:
            raise SessionStoreError("session id must be a non-empty string")
        config_json = json.dumps(dict(model_config), default=str) if model_config else None

        def do(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO sessions(id, source, user_id, model, model_config, system_prompt, "
                "parent_session_id, started_at) VALUES (?,?,?,?,?,?,?,?) "
                "ON CONFLICT(id) DO UPDATE SET "
                "user_id=COALESCE(sessions.user_id, excluded.user_id), "
                "model=COALESCE(sessions.model, excluded.model), "
                "parent_session_id=COALESCE(sessions.parent_session_id, "
                "excluded.parent_session_id), "
                "system_prompt=COALESCE(sessions.system_prompt, excluded.system_prompt)",
                (
                    session_id,
                    source or "cli",
                    user_id,
                    model,
                    config_json,
                    system_prompt,
                    parent_session_id,
                    started_at if started_at is not None else time.time(),
                ),
            )
            if title:
                self._set_title(conn, session_id, title)

        self.write(do)

    def ensure_session(self, session_id: str, **fields: Any) -> None:
        """Create the session row if it does not exist (same arguments as create_session)."""
        if not self.read("SELECT 1 FROM sessions WHERE id=?", (session_id,)):
            self.create_session(session_id, **fields)

    def record_system_prompt(self, session_id: str, text: str) -> None:
        """Store the session's frozen system prompt snapshot (the host calls this once the
        prompt is built). Creates the session row when missing."""

        def do(conn: sqlite3.Connection) -> None:
            cur = conn.execute("UPDATE sessions SET system_prompt=? WHERE id=?", (text, session_id))
            if cur.rowcount == 0:
                conn.execute(
                    "INSERT INTO sessions(id, source, started_at, system_prompt) "
                    "VALUES (?, 'cli', ?, ?)",
                    (session_id, time.time(), text),
                )

        self.write(do)

    def end_session(self, session_id: str, reason: str = "user_exit") -> None:
        """Mark the session ended (idempotent: the first end time and reason are kept)."""
        self.write(
            lambda c: c.execute(
                "UPDATE sessions SET ended_at=COALESCE(ended_at, ?), "
                "end_reason=COALESCE(end_reason, ?) WHERE id=?",
                (time.time(), reason, session_id),
            )
        )

    def reopen_session(self, session_id: str) -> None:
        """Clear ``ended_at``/``end_reason`` (resume)."""
        self.write(
            lambda c: c.execute(
                "UPDATE sessions SET ended_at=NULL, end_reason=NULL WHERE id=?", (session_id,)
            )
        )

    def _set_title(self, conn: sqlite3.Connection, session_id: str, title: str) -> str | None:
        clean = sanitize_title(title)
        if clean is None:
            conn.execute("UPDATE sessions SET title=NULL WHERE id=?", (session_id,))
            return None
        candidate = clean
        n = 2
        while True:
            row = conn.execute(
                "SELECT id FROM sessions WHERE title=? AND id<>?", (candidate, session_id)
            ).fetchone()
            if row is None:
                break
            suffix = f" #{n}"
            candidate = clean[: TITLE_MAX - len(suffix)] + suffix
            n += 1
        conn.execute("UPDATE sessions SET title=? WHERE id=?", (candidate, session_id))
        return candidate

    def set_title(self, session_id: str, title: str) -> str | None:
        """Sanitise and store a title; a clash gets ``" #2"``, ``" #3"``… Returns the stored
        title (``None`` when nothing printable remained)."""
        return self.write(lambda c: self._set_title(c, session_id, title))

    def resolve_session(self, ref: str) -> str | None:
        """A session id from an id, a unique id prefix (≥4 chars) or a title (the newest
        ``title #N`` variant wins)."""
        ref = ref.strip()
        if ref.startswith("@session:"):
            ref = ref.split("/", 1)[-1]
        if not ref:
            return None
        if self.read("SELECT 1 FROM sessions WHERE id=?", (ref,)):
            return ref
        rows = self.read(
            "SELECT id FROM sessions WHERE title=? OR title LIKE ? ESCAPE '\\' "
            "ORDER BY started_at DESC",
            (ref, ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + " #%"),
        )
        if rows:
            return str(rows[0][0])
        if len(ref) >= 4:
            rows = self.read(
                "SELECT id FROM sessions WHERE substr(id, 1, ?) = ? LIMIT 2", (len(ref), ref)
            )
            if len(rows) == 1:
                return str(rows[0][0])
        return None

    def get_session(self, session_id: str) -> SessionRecord | None:
        """The session row, or ``None``."""
        rows = self.read(
            f"SELECT {SESSION_COLUMNS}, "
            "(SELECT MAX(timestamp) FROM messages m WHERE m.session_id = s.id), system_prompt "
            "FROM sessions s WHERE id=?",
            (session_id,),
        )
        if not rows:
            return None
        row = rows[0]
        return session_from_row(row[:14], system_prompt=row[14])

    def list_sessions(
        self,
        *,
        limit: int = 20,
        offset: int = 0,
        source: str | None = None,
        exclude_sources: Iterable[str] = (),
        exclude_ids: Iterable[str] = (),
        roots_only: bool = False,
        oldest_first: bool = False,
        after: float | None = None,
        before: float | None = None,
        tool: str | None = None,
    ) -> list[SessionRecord]:
        """Sessions newest first (or oldest first), each with ``last_active``.

        ``tool`` keeps sessions with a message that called or came from that tool, counting
        the messages of the session's descendants too (a root is listed when a compressed or
        /new continuation of it used the tool)."""
        where: list[str] = []
        params: list[Any] = []
        if tool:
            where.append(
                "EXISTS (WITH RECURSIVE fam(id) AS (SELECT s.id UNION SELECT c.id FROM "
                "sessions c JOIN fam ON c.parent_session_id = fam.id) SELECT 1 FROM messages m "
                "WHERE m.session_id IN fam AND (m.tool_name = ? OR instr(m.tool_calls, ?) > 0))"
            )
            params.extend([tool, f'"{tool}"'])
        if source:
            where.append("s.source = ?")
            params.append(source)
        excluded_sources = list(exclude_sources)
        if excluded_sources:
            where.append(f"s.source NOT IN ({','.join('?' * len(excluded_sources))})")
            params.extend(excluded_sources)
        excluded_ids = list(exclude_ids)
        if excluded_ids:
            where.append(f"s.id NOT IN ({','.join('?' * len(excluded_ids))})")
            params.extend(excluded_ids)
        if roots_only:
            where.append(
                "(s.parent_session_id IS NULL OR s.parent_session_id NOT IN "
                "(SELECT id FROM sessions))"
            )
        if after is not None:
            where.append("s.started_at >= ?")
            params.append(after)
        if before is not None:
            where.append("s.started_at < ?")
            params.append(before)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        order = "ASC" if oldest_first else "DESC"
        rows = self.read(
            f"SELECT {SESSION_COLUMNS}, "
            "(SELECT MAX(timestamp) FROM messages m WHERE m.session_id = s.id) "
            f"FROM sessions s {clause} ORDER BY s.started_at {order}, s.rowid {order} "
            "LIMIT ? OFFSET ?",
            [*params, max(0, int(limit)), max(0, int(offset))],
        )
        return [session_from_row(row) for row in rows]

    def count_sessions(self) -> int:
        """Number of sessions stored."""
        return int(self.read("SELECT COUNT(*) FROM sessions")[0][0])

    def lineage(self, session_id: str) -> list[str]:
        """Every session connected to ``session_id`` by ``parent_session_id``: its ancestors
        (root first), itself, and all descendants. Cycles are tolerated."""
        ancestors: list[str] = []
        seen = {session_id}
        current = session_id
        while True:
            rows = self.read("SELECT parent_session_id FROM sessions WHERE id=?", (current,))
            parent = rows[0][0] if rows else None
            if not parent or parent in seen:
                break
            seen.add(parent)
            ancestors.append(parent)
            current = parent
        ancestors.reverse()
        out = [*ancestors, session_id]
        frontier = [session_id]
        while frontier:
            marks = ",".join("?" * len(frontier))
            rows = self.read(
                f"SELECT id FROM sessions WHERE parent_session_id IN ({marks})", frontier
            )
            frontier = [r[0] for r in rows if r[0] not in seen]
            seen.update(frontier)
            out.extend(frontier)
        return out

    def lineage_root(self, session_id: str) -> str:
        """The oldest ancestor of ``session_id`` (itself when it has no parent)."""
        seen = {session_id}
        current = session_id
        while True:
            rows = self.read("SELECT parent_session_id FROM sessions WHERE id=?", (current,))
            parent = rows[0][0] if rows else None
            if not parent or parent in seen:
                return current
            if not self.read("SELECT 1 FROM sessions WHERE id=?", (parent,)):
                return current
            seen.add(parent)
            current = parent

    # -- messages --------------------------------------------------------------------

    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        timestamp: float | None = None,
        source: str = "cli",
    ) -> list[int]:
        """Append OpenAI-style messages in one transaction (creating the session row when
        missing) and index them; returns the new message ids in order. A message may carry
        ``timestamp``, ``token_count``, ``finish_reason``, ``reasoning`` and
        ``_active``/``_compacted`` overrides."""
        base_ts = time.time() if timestamp is None else timestamp
        prepared: list[tuple[tuple[Any, ...], tuple[str, str]]] = []
        tool_calls_total = 0
        for offset, msg in enumerate(messages):
            if not isinstance(msg, Mapping):
                continue
            role = str(msg.get("role") or "user")
            content = content_text(msg.get("content"))
            calls = msg.get("tool_calls")
            names, args = tool_call_parts(calls)
            tool_calls_total += len(names)
            calls_json = json.dumps(calls, ensure_ascii=False, default=str) if calls else None
            tool_name = msg.get("tool_name") or (msg.get("name") if role == "tool" else None)
            speaker = msg.get("name") if role != "tool" else None
            ts = msg.get("timestamp")
            ts_value = float(ts) if isinstance(ts, int | float) else base_ts + offset * 1e-6
            tokens = msg.get("token_count")
            if not isinstance(tokens, int):
                tokens = estimate_message_tokens(msg)
            active = msg.get("_active", True)
            compacted = msg.get("_compacted", False)
            row = (
                session_id,
                role,
                content,
                msg.get("tool_call_id"),
                calls_json,
                tool_name,
                ts_value,
                tokens,
                msg.get("finish_reason"),
                msg.get("reasoning") if isinstance(msg.get("reasoning"), str) else None,
                1 if active else 0,
                1 if compacted else 0,
                speaker if isinstance(speaker, str) else None,
            )
            tool_meta = " ".join(filter(None, [tool_name, *names]))
            fields = index_fields(
                content,
                name=speaker if isinstance(speaker, str) else None,
                tool_name=tool_meta or None,
                tool_args=args,
                cap=self.index_char_cap,
            )
            prepared.append((row, fields))
        if not prepared:
            return []

        def do(conn: sqlite3.Connection) -> list[int]:
            conn.execute(
                "INSERT OR IGNORE INTO sessions(id, source, started_at) VALUES (?, ?, ?)",
                (session_id, source, base_ts),
            )
            ids: list[int] = []
            for row, (body, meta) in prepared:
                cur = conn.execute(
                    "INSERT INTO messages(session_id, role, content, tool_call_id, tool_calls, "
                    "tool_name, timestamp, token_count, finish_reason, reasoning, active, "
                    "compacted, name) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    row,
                )
                rowid = int(cur.lastrowid or 0)
                ids.append(rowid)
                if self.fts_enabled:
                    conn.execute(
                        "INSERT INTO messages_fts(rowid, body, meta) VALUES (?, ?, ?)",
                        (rowid, body, meta),
                    )
            conn.execute(
                "UPDATE sessions SET message_count = message_count + ?, "
                "tool_call_count = tool_call_count + ? WHERE id = ?",
                (len(prepared), tool_calls_total, session_id),
            )
            return ids

        return self.write(do)

    def add_token_usage(self, session_id: str, input_tokens: int, output_tokens: int) -> None:
        """Accumulate token usage reported by the model API."""
        self.write(
            lambda c: c.execute(
                "UPDATE sessions SET input_tokens = input_tokens + ?, "
                "output_tokens = output_tokens + ? WHERE id = ?",
                (max(0, input_tokens), max(0, output_tokens), session_id),
            )
        )

    def get_messages(
        self, session_id: str, *, include_inactive: bool = False
    ) -> list[StoredMessage]:
        """Messages of a session in order (live rows only unless ``include_inactive``)."""
        flt = "" if include_inactive else " AND active = 1"
        rows = self.read(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id=?{flt} ORDER BY id",
            (session_id,),
        )
        return [message_from_row(r) for r in rows]

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        """The live transcript as OpenAI-style messages (for resume)."""
        return [m.to_chat() for m in self.get_messages(session_id)]

    def get_message(self, message_id: int) -> StoredMessage | None:
        """One message by id."""
        rows = self.read(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id=?", (message_id,))
        return message_from_row(rows[0]) if rows else None

    def mark_compacted(self, session_id: str, message_ids: Iterable[int]) -> int:
        """Soft-archive messages the compressor summarised away: ``active=0, compacted=1``.
        They stay searchable (even from the same session, whose live context no longer has
        them). Returns the number of rows changed."""
        ids = [int(i) for i in message_ids]
        if not ids:
            return 0

        def do(conn: sqlite3.Connection) -> int:
            total = 0
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                cur = conn.execute(
                    f"UPDATE messages SET active=0, compacted=1 WHERE session_id=? AND id IN "
                    f"({','.join('?' * len(chunk))})",
                    [session_id, *chunk],
                )
                total += cur.rowcount
            return total

        return self.write(do)

    def mark_rewound(self, session_id: str, message_ids: Iterable[int]) -> int:
        """Hide undone/rewound messages (``active=0, compacted=0``): never searched."""
        ids = [int(i) for i in message_ids]
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        return self.write(
            lambda c: (
                c.execute(
                    "UPDATE messages SET active=0, compacted=0 "
                    f"WHERE session_id=? AND id IN ({marks})",
                    [session_id, *ids],
                ).rowcount
            )
        )

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
                    conn.execute(
                        f"DELETE FROM messages_fts WHERE rowid IN "
                        f"(SELECT id FROM messages WHERE session_id IN ({marks}))",
                        chunk,
                    )
                removed += conn.execute(
                    f"DELETE FROM messages WHERE session_id IN ({marks})", chunk
                ).rowcount
                conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
            return removed

        return self.write(do)

    def sessions_older_than(self, cutoff: float) -> list[str]:
        """Ids of sessions whose last activity (or start) is before ``cutoff``."""
        rows = self.read(
            "SELECT s.id FROM sessions s WHERE COALESCE((SELECT MAX(timestamp) FROM messages m "
            "WHERE m.session_id = s.id), s.started_at) < ? ORDER BY s.started_at",
            (cutoff,),
        )
        return [r[0] for r in rows]

    def reindex(self) -> int:
        """Rebuild the full-text index from the messages table."""
        if self.fts_error is not None and not self.fts_enabled:
            raise SessionStoreError(self.fts_error)

        def do(conn: sqlite3.Connection) -> int:
            if not self._has_table(conn, "messages_fts"):
                create_fts_table(conn)
            return reindex_fts(conn, cap=self.index_char_cap)

        count = self.write(do)
        self.fts_enabled = True
        self.fts_error = None
        return count

    def stats(self) -> dict[str, Any]:
        """Counts, sizes and (when the compression layer's table exists) compression totals."""
        conn = self._conn()
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        messages, compacted = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(compacted), 0) FROM messages"
        ).fetchone()
        by_source = dict(
            conn.execute("SELECT source, COUNT(*) FROM sessions GROUP BY source").fetchall()
        )
        tokens = conn.execute(
            "SELECT COALESCE(SUM(input_tokens),0), COALESCE(SUM(output_tokens),0), "
            "COALESCE(SUM(tool_call_count),0) FROM sessions"
        ).fetchone()
        size = sum(
            Path(str(self.path) + s).stat().st_size
            for s in ("", "-wal", "-shm")
            if Path(str(self.path) + s).exists()
        )
        out: dict[str, Any] = {
            "path": str(self.path),
            "schema_version": self.schema_version(),
            "fts": self.fts_enabled,
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

    def speaker_names(self) -> frozenset[str]:
        """Lower-cased words of every participant name (``messages.name``) in the archive.
        Cached per object and recomputed when a message was added since the last call."""
        newest = int(self.read("SELECT MAX(id) FROM messages")[0][0] or 0)
        if self._speakers is not None and self._speakers[0] == newest:
            return self._speakers[1]
        rows = self.read("SELECT DISTINCT name FROM messages WHERE name IS NOT NULL")
        names = frozenset(
            word for (name,) in rows for word in str(name).lower().split() if len(word) > 1
        )
        self._speakers = (newest, names)
        return names

    def iter_all_session_ids(self) -> Iterator[str]:
        """Every session id, oldest first."""
        for row in self.read("SELECT id FROM sessions ORDER BY started_at"):
            yield row[0]


__all__ = [
    "DB_FILE",
    "MESSAGE_COLUMNS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SESSION_COLUMNS",
    "TITLE_MAX",
    "SessionDB",
    "SessionRecord",
    "SessionStoreBusy",
    "SessionStoreError",
    "StoredMessage",
    "content_text",
    "message_from_row",
    "migrate",
    "read_schema_version",
    "sanitize_title",
    "session_from_row",
    "tighten_permissions",
    "tool_call_parts",
]
