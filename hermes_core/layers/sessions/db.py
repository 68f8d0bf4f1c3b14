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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.context import redact
from hermes_core.homefiles import own_db_path
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
from hermes_core.layers.sessions.fts import probe_fts5
from hermes_core.layers.sessions.ingest import INSERT_COLUMNS, prepare_messages
from hermes_core.layers.sessions.records import (
    ALL_USERS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TITLE_MAX,
    AllUsers,
    SessionRecord,
    StoredMessage,
    UserScope,
    content_text,
    message_from_row,
    sanitize_title,
    scope_sql,
    session_from_row,
    stored_user_id,
    tool_call_parts,
)
from hermes_core.layers.sessions.sanitize import (
    as_text,
    clamp_int,
    clean_timestamp,
    json_text,
    optional_text,
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
from hermes_core.text import like_escape

DB_FILE = "state.db"
BUSY_TIMEOUT_MS = 1000
READ_BUSY_TIMEOUT_MS = 5000
RETRY_JITTER_S = (0.020, 0.150)
RETRY_DEADLINE_S = 60.0
CHECKPOINT_EVERY = 50
MAX_REF_CHARS = 1024
"""A session reference (id, id prefix, title) longer than this names no session."""

T = TypeVar("T")


def _claim(conn: sqlite3.Connection, session_id: str, user: str | None) -> None:
    """Raise unless ``session_id`` is new or already belongs to ``user``."""
    row = conn.execute("SELECT user_id FROM sessions WHERE id=?", (session_id,)).fetchone()
    if row is not None and row[0] != user:
        raise SessionStoreError(
            f"session id {session_id!r} is already used in another user scope; session ids "
            "are never shared across users — open the session with a new id"
        )


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


class SessionDB:
    """The archive at ``path``. Create with :meth:`open`; close with :meth:`close`."""

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
        self._speakers: dict[object, tuple[int, frozenset[str]]] = {}
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
            self.fts_error = "messages_fts is missing; run `hermes sessions reindex`."

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
    def read_only(self) -> bool:
        """True when this file is only read (newer schema or another program's file)."""
        return self.read_only_reason is not None

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

    def _check_writable(self) -> None:
        if self.read_only_reason is not None:
            raise SessionStoreReadOnly(self.read_only_reason)

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
        (so reopening a session is harmless). A session's ``user_id`` never changes: a
        second call for another user raises :class:`SessionStoreError` (session ids are not
        shared across users). Values are sanitised (:mod:`.sanitize`); the system prompt is
        redacted unless :attr:`redact_secrets` is off."""
        if not isinstance(session_id, str) or not session_id:
            raise SessionStoreError("session id must be a non-empty string")
        user = stored_user_id(user_id)
        config_json = json_text(dict(model_config)) if model_config else None
        prompt = optional_text(system_prompt)
        if prompt is not None and self.redact_secrets:
            prompt = redact(prompt)
        values = (
            session_id,
            as_text(source) or "cli",
            user,
            optional_text(model),
            config_json,
            prompt,
            optional_text(parent_session_id),
            clean_timestamp(started_at),
        )

        def do(conn: sqlite3.Connection) -> None:
            _claim(conn, session_id, user)
            conn.execute(
                "INSERT INTO sessions(id, source, user_id, model, model_config, system_prompt, "
                "parent_session_id, started_at) VALUES (?,?,?,?,?,?,?,?) "
                "ON CONFLICT(id) DO UPDATE SET "
                "model=COALESCE(sessions.model, excluded.model), "
                "parent_session_id=COALESCE(sessions.parent_session_id, "
                "excluded.parent_session_id), "
                "system_prompt=COALESCE(sessions.system_prompt, excluded.system_prompt)",
                values,
            )
            if title:
                self._set_title(conn, session_id, title)

        self.write(do)

    def ensure_session(self, session_id: str, **fields: Any) -> None:
        """Create the session row if it does not exist (same arguments as create_session);
        an existing row of another user raises like :meth:`create_session`."""
        self._check_writable()
        rows = self.read("SELECT user_id FROM sessions WHERE id=?", (session_id,))
        if not rows:
            self.create_session(session_id, **fields)
        elif rows[0][0] != stored_user_id(fields.get("user_id")):
            self.write(lambda c: _claim(c, session_id, stored_user_id(fields.get("user_id"))))

    def record_system_prompt(
        self, session_id: str, text: str, *, user_id: str | None = None
    ) -> None:
        """Store the session's frozen system prompt snapshot (the host calls this once the
        prompt is built). Creates the session row (for ``user_id``) when missing."""
        prompt = as_text(text)
        if self.redact_secrets:
            prompt = redact(prompt)
        user = stored_user_id(user_id)

        def do(conn: sqlite3.Connection) -> None:
            _claim(conn, session_id, user)
            cur = conn.execute(
                "UPDATE sessions SET system_prompt=? WHERE id=?", (prompt, session_id)
            )
            if cur.rowcount == 0:
                conn.execute(
                    "INSERT INTO sessions(id, source, user_id, started_at, system_prompt) "
                    "VALUES (?, 'cli', ?, ?, ?)",
                    (session_id, user, time.time(), prompt),
                )

        self.write(do)

    def end_session(self, session_id: str, reason: str = "user_exit") -> None:
        """Mark the session ended (idempotent: the first end time and reason are kept)."""
        self.write(
            lambda c: c.execute(
                "UPDATE sessions SET ended_at=COALESCE(ended_at, ?), "
                "end_reason=COALESCE(end_reason, ?) WHERE id=?",
                (time.time(), as_text(reason) or "exit", session_id),
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
        """Titles are unique per user: a clash is looked for among the same user's sessions
        only (another user's titles are never revealed by a ``#2``)."""
        if conn.execute("SELECT 1 FROM sessions WHERE id=?", (session_id,)).fetchone() is None:
            return None
        clean = sanitize_title(title)
        if clean is None:
            conn.execute("UPDATE sessions SET title=NULL WHERE id=?", (session_id,))
            return None
        candidate = clean
        n = 2
        while True:
            row = conn.execute(
                "SELECT id FROM sessions WHERE title=? AND id<>? AND COALESCE(user_id, '') = "
                "COALESCE((SELECT user_id FROM sessions WHERE id=?), '')",
                (candidate, session_id, session_id),
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
        title; ``None`` reports that no title was stored: the session does not exist, or
        nothing printable remained (the title is then cleared)."""
        return self.write(lambda c: self._set_title(c, session_id, title))

    def resolve_session(
        self, ref: str, *, user: UserScope = ALL_USERS, hidden_sources: Sequence[str] = ()
    ) -> str | None:
        """A session id from an id, a unique id prefix (≥4 chars) or a title (the newest
        ``title #N`` variant wins), looking only at sessions in ``user``'s scope and not
        from ``hidden_sources``: anything else answers ``None`` exactly like a missing id."""
        if not isinstance(ref, str):
            return None
        ref = ref.strip()
        if ref.startswith("@session:"):
            ref = ref.split("/", 1)[-1]
        if not ref or len(ref) > MAX_REF_CHARS:
            return None  # ids are ≤ 256 characters; titles are shorter than this too
        scope, params = scope_sql(user)
        if hidden_sources:
            scope += f" AND source NOT IN ({','.join('?' * len(hidden_sources))})"
            params = [*params, *hidden_sources]
        if self.read(f"SELECT 1 FROM sessions WHERE id=? AND {scope}", (ref, *params)):
            return ref
        rows = self.read(
            f"SELECT id FROM sessions WHERE (title=? OR title LIKE ? ESCAPE '\\') AND {scope} "
            "ORDER BY started_at DESC",
            (
                ref,
                like_escape(ref) + " #%",
                *params,
            ),
        )
        if rows:
            return str(rows[0][0])
        if len(ref) >= 4:
            rows = self.read(
                f"SELECT id FROM sessions WHERE substr(id, 1, ?) = ? AND {scope} LIMIT 2",
                (len(ref), ref, *params),
            )
            if len(rows) == 1:
                return str(rows[0][0])
        return None

    def get_session(self, session_id: str, *, user: UserScope = ALL_USERS) -> SessionRecord | None:
        """The session row, or ``None`` (also when it is outside ``user``'s scope)."""
        scope, params = scope_sql(user)
        rows = self.read(
            f"SELECT {SESSION_COLUMNS}, "
            "(SELECT MAX(timestamp) FROM messages m WHERE m.session_id = s.id), system_prompt "
            f"FROM sessions s WHERE id=? AND {scope}",
            (session_id, *params),
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
        user: UserScope = ALL_USERS,
    ) -> list[SessionRecord]:
        """Sessions newest first (or oldest first), each with ``last_active``, of ``user``'s
        scope only.

        ``tool`` keeps sessions with a message that called or came from that tool, counting
        the messages of the session's descendants too (a root is listed when a compressed or
        /new continuation of it used the tool)."""
        scope, scope_params = scope_sql(user, "s.user_id")
        where: list[str] = [scope]
        params: list[Any] = [*scope_params]
        if tool:
            where.append(
                "EXISTS (WITH RECURSIVE fam(id) AS (SELECT s.id UNION SELECT c.id FROM "
                "sessions c JOIN fam ON c.parent_session_id = fam.id "
                "WHERE COALESCE(c.user_id, '') = COALESCE(s.user_id, '')) SELECT 1 FROM messages m "
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
                "(SELECT p.id FROM sessions p WHERE COALESCE(p.user_id, '') = "
                "COALESCE(s.user_id, '')))"
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

    def count_sessions(self, *, user: UserScope = ALL_USERS) -> int:
        """Number of sessions stored (in ``user``'s scope)."""
        scope, params = scope_sql(user)
        return int(self.read(f"SELECT COUNT(*) FROM sessions WHERE {scope}", params)[0][0])

    def lineage(self, session_id: str, *, user: UserScope = ALL_USERS) -> list[str]:
        """Every session connected to ``session_id`` by ``parent_session_id``: its ancestors
        (root first), itself, and all descendants. A lineage never crosses users: a parent or
        child link to a session of another user scope counts as dangling (so nobody can
        probe for other users' session ids by naming them as a parent). With ``user``, a
        start session outside that scope has no lineage but itself. Cycles are tolerated."""
        owner = self._owner(session_id)
        if owner is None or (not isinstance(user, AllUsers) and owner[0] != user):
            return [session_id]
        same = "COALESCE(user_id, '') = COALESCE(?, '')"
        ancestors: list[str] = []
        seen = {session_id}
        current = session_id
        while True:
            rows = self.read(
                "SELECT p.id FROM sessions c JOIN sessions p ON p.id = c.parent_session_id "
                "WHERE c.id=? AND COALESCE(p.user_id, '') = COALESCE(?, '')",
                (current, owner[0]),
            )
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
                f"SELECT id FROM sessions WHERE parent_session_id IN ({marks}) AND {same}",
                [*frontier, owner[0]],
            )
            frontier = [r[0] for r in rows if r[0] not in seen]
            seen.update(frontier)
            out.extend(frontier)
        return out

    def sessions_titled(
        self,
        words: Sequence[str],
        *,
        user: UserScope = ALL_USERS,
        hidden_sources: Sequence[str] = (),
        exclude: Sequence[str] = (),
        limit: int = 5,
    ) -> list[tuple[str, int]]:
        """``(session id, first message id)`` of sessions in ``user``'s scope whose title
        contains every one of ``words`` (case-insensitive), newest first; sessions from
        ``hidden_sources``, those in ``exclude`` and those without messages are left out."""
        if not words:
            return []
        if isinstance(user, AllUsers):
            scope, params = scope_sql(user, "s.user_id")
            clauses = [scope]
        else:
            # One user's titled sessions through the partial idx_sessions_user_title
            # (``+`` keeps the planner off idx_sessions_user, which walks every session of
            # the user, titled or not: 13 ms at 25k untitled sessions, 0.04 ms this way).
            scope, params = scope_sql(user, "+s.user_id")
            clauses = ["COALESCE(s.user_id, '') = ?", scope]
            params = [stored_user_id(user) or "", *params]
        for word in words:
            clauses.append("LOWER(s.title) LIKE ? ESCAPE '\\'")
            params = [*params, f"%{like_escape(word.casefold())}%"]
        if hidden_sources:
            clauses.append(f"s.source NOT IN ({','.join('?' * len(hidden_sources))})")
            params = [*params, *hidden_sources]
        if exclude:
            clauses.append(f"s.id NOT IN ({','.join('?' * len(exclude))})")
            params = [*params, *exclude]
        rows = self.read(
            "SELECT s.id, (SELECT MIN(m.id) FROM messages m WHERE m.session_id = s.id) AS first "
            f"FROM sessions s WHERE s.title IS NOT NULL AND {' AND '.join(clauses)} "
            "ORDER BY s.started_at DESC LIMIT ?",
            (*params, limit),
        )
        return [(str(r[0]), int(r[1])) for r in rows if r[1] is not None]

    def lineage_root(self, session_id: str) -> str:
        """The oldest ancestor of ``session_id`` in its own user scope (itself when it has
        no parent there)."""
        return self.lineage(session_id)[0]

    def _owner(self, session_id: str) -> tuple[str | None] | None:
        """``(user_id,)`` of a stored session, ``None`` when there is no such session."""
        rows = self.read("SELECT user_id FROM sessions WHERE id=?", (session_id,))
        return (rows[0][0],) if rows else None

    # -- messages --------------------------------------------------------------------

    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Any],
        *,
        timestamp: float | None = None,
        source: str = "cli",
        user: UserScope = ALL_USERS,
        turn_key: str | None = None,
    ) -> list[int]:
        """Append OpenAI-style messages in one transaction (creating the session row when
        missing) and index them; returns the new message ids in order.

        Every message is stored: values are sanitised, never refused (:mod:`.sanitize`); an
        item that is not a message at all raises :class:`SessionStoreError` and nothing is
        written. Text is redacted unless :attr:`redact_secrets` is off. A message may carry
        ``timestamp``, ``token_count``, ``finish_reason``, ``reasoning`` and
        ``_active``/``_compacted`` overrides. With ``user`` (not :data:`ALL_USERS`) the
        session must belong to that user (a new row is created for them). A ``turn_key``
        already stored for this session makes the call a no-op returning ``[]`` (an
        idempotent resend)."""
        self._check_writable()
        base_ts = clean_timestamp(timestamp)
        batch = prepare_messages(
            session_id,
            messages,
            base_ts=base_ts,
            redact_secrets=self.redact_secrets,
            index_char_cap=self.index_char_cap,
        )
        if not batch.rows:
            return []
        owner = None if isinstance(user, AllUsers) else stored_user_id(user)
        src = as_text(source) or "cli"
        key = optional_text(turn_key)

        def do(conn: sqlite3.Connection) -> list[int]:
            if not isinstance(user, AllUsers):
                _claim(conn, session_id, owner)
            if (
                key is not None
                and conn.execute(
                    "SELECT 1 FROM messages WHERE session_id=? AND turn_key=? LIMIT 1",
                    (session_id, key),
                ).fetchone()
            ):
                return []
            conn.execute(
                "INSERT OR IGNORE INTO sessions(id, source, user_id, started_at) "
                "VALUES (?, ?, ?, ?)",
                (session_id, src, owner, base_ts),
            )
            ids: list[int] = []
            for position, row in enumerate(batch.rows):
                cur = conn.execute(
                    f"INSERT INTO messages({INSERT_COLUMNS}, turn_key) "
                    f"VALUES ({','.join('?' * (len(row.values) + 1))})",
                    (*row.values, key if position == 0 else None),
                )
                rowid = int(cur.lastrowid or 0)
                ids.append(rowid)
                if self.fts_enabled:
                    conn.execute(
                        "INSERT INTO messages_fts(rowid, body, meta) VALUES (?, ?, ?)",
                        (rowid, row.body, row.meta),
                    )
            conn.execute(
                "UPDATE sessions SET message_count = message_count + ?, "
                "tool_call_count = tool_call_count + ? WHERE id = ?",
                (len(batch.rows), batch.tool_calls, session_id),
            )
            return ids

        return self.write(do)

    def add_token_usage(self, session_id: str, input_tokens: int, output_tokens: int) -> None:
        """Accumulate token usage reported by the model API (clamped to ``[0, 2**53]``)."""
        cap = 2**53
        self.write(
            lambda c: c.execute(
                "UPDATE sessions SET input_tokens = MIN(input_tokens + ?, ?), "
                "output_tokens = MIN(output_tokens + ?, ?) WHERE id = ?",
                (
                    clamp_int(input_tokens, 0, cap) or 0,
                    cap,
                    clamp_int(output_tokens, 0, cap) or 0,
                    cap,
                    session_id,
                ),
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
                    fts_delete(conn, f"session_id IN ({marks})", list(chunk), self.index_char_cap)
                removed += conn.execute(
                    f"DELETE FROM messages WHERE session_id IN ({marks})", chunk
                ).rowcount
                conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
            self._speakers.clear()
            return removed

        return self.write(do)

    def sessions_older_than(
        self, cutoff: float, *, user: UserScope = ALL_USERS, source: str | None = None
    ) -> list[str]:
        """Ids of sessions (in ``user``'s scope, of ``source`` when given) whose last activity
        (or start) is before ``cutoff``."""
        scope, params = scope_sql(user, "s.user_id")
        if source is not None:
            scope += " AND s.source = ?"
            params = [*params, source]
        rows = self.read(
            "SELECT s.id FROM sessions s WHERE COALESCE((SELECT MAX(timestamp) FROM messages m "
            f"WHERE m.session_id = s.id), s.started_at) < ? AND {scope} ORDER BY s.started_at",
            (cutoff, *params),
        )
        return [r[0] for r in rows]

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

    def stats(self, *, user: UserScope = ALL_USERS) -> dict[str, Any]:
        """Counts of ``user``'s scope, the file's size and (when the compression layer's
        table exists) compression totals."""
        conn = self._conn()
        scope, p = scope_sql(user)
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

    def user_scopes(self) -> list[dict[str, Any]]:
        """Every user scope with sessions: ``user_id`` (``None``: no user), ``sessions`` and
        ``last_active`` (latest start), busiest first. For operators; never shown to a
        user's tool."""
        rows = self.read(
            "SELECT user_id, COUNT(*), MAX(started_at) FROM sessions GROUP BY user_id "
            "ORDER BY COUNT(*) DESC, user_id"
        )
        return [{"user_id": r[0], "sessions": int(r[1]), "last_active": r[2]} for r in rows]

    def speaker_names(self, *, user: UserScope = ALL_USERS) -> frozenset[str]:
        """Lower-cased words of every participant name (``messages.name``) in ``user``'s
        sessions. Cached per object and scope and brought up to date by reading only the
        messages added since (ids only grow), so a search after each turn does not rescan
        the archive; :meth:`delete_sessions` drops the cache."""
        newest = int(self.read("SELECT MAX(id) FROM messages")[0][0] or 0)
        key: object = user
        cached = self._speakers.get(key)
        if cached is not None and cached[0] == newest:
            return cached[1]
        since = cached[0] if cached is not None and cached[0] < newest else 0
        scope, params = scope_sql(user, "s.user_id")
        rows = self.read(
            "SELECT DISTINCT m.name FROM messages m JOIN sessions s ON s.id = m.session_id "
            f"WHERE m.id > ? AND m.id <= ? AND m.name IS NOT NULL AND {scope}",
            [since, newest, *params],
        )
        found = {word for (name,) in rows for word in str(name).lower().split() if len(word) > 1}
        names = frozenset(found | (cached[1] if since and cached is not None else set()))
        self._speakers[key] = (newest, names)
        return names

    def iter_all_session_ids(self) -> Iterator[str]:
        """Every session id, oldest first."""
        for row in self.read("SELECT id FROM sessions ORDER BY started_at"):
            yield row[0]


__all__ = [
    "ALL_USERS",
    "DB_FILE",
    "MESSAGE_COLUMNS",
    "MIGRATIONS",
    "PRIVATE_MODE",
    "SCHEMA_VERSION",
    "SESSION_COLUMNS",
    "TITLE_MAX",
    "SessionDB",
    "SessionRecord",
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
