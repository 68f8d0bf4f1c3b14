"""The storage seam of the session archive: what every backend shares.

:class:`ArchiveBase` holds the archive's behaviour written once, in SQL both backends run
(SQLite: :class:`~hermes_core.layers.sessions.db.SessionDB`, PostgreSQL:
:class:`~hermes_core.layers.sessions.pg.PostgresSessionDB`): sessions, titles, lineage, user
scopes, messages, compaction flags. A backend supplies the connection, the transaction, the
retry policy and the full-text index through the hooks below; ``?`` placeholders are used
everywhere (the PostgreSQL backend rewrites them). :class:`SessionStore` is the typed
interface callers (search, ranking, CLI, benchmarks) rely on.

Contract of every backend:

* Every write is committed before the method returns; :meth:`ArchiveBase.transaction` groups
  writes of one thread into one transaction (committed at the end, rolled back on error).
* User isolation: every query that reads sessions or messages on behalf of a user carries its
  ``user_id`` condition (:func:`~.records.scope_sql`); session ids are never shared across
  users.
* Full-text search sees the text :func:`~.fts.index_fields` produces (NFKC, CJK split into
  characters, capped at ``index_char_cap``) and the query language of :mod:`.fts`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from hermes_core.layers.sessions.errors import SessionStoreError, SessionStoreReadOnly
from hermes_core.layers.sessions.ingest import MessageRow, indexed_text, prepare_messages
from hermes_core.layers.sessions.records import (
    ALL_USERS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TITLE_MAX,
    AllUsers,
    SessionRecord,
    StoredMessage,
    UserScope,
    message_from_row,
    sanitize_title,
    scope_sql,
    session_from_row,
    stored_user_id,
)
from hermes_core.layers.sessions.sanitize import (
    as_text,
    clamp_int,
    clean_timestamp,
    json_text,
    optional_text,
)
from hermes_core.scope import check_user_id
from hermes_core.security.redaction import redact
from hermes_core.text import like_escape

T = TypeVar("T")

MAX_REF_CHARS = 1024
"""A session reference (id, id prefix, title) longer than this names no session."""

COPY_SESSION_COLUMNS = (
    "id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at, "
    "ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens, title, "
    "import_digest"
)
"""Every column of a session row (``user_id`` third), as copied between archives."""
COPY_MESSAGE_COLUMNS = (
    "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, "
    "token_count, finish_reason, reasoning, active, compacted, name, turn_key"
)
"""Every stored column of a message row, as copied between archives."""

RankedRows = list[tuple[Any, ...]]
"""``(message id, session id, bm25 (negative: lower is better), timestamp, token_count)``."""


class SessionStore(Protocol):
    """What callers of the archive use, whichever backend holds it.

    Implemented by :class:`~hermes_core.layers.sessions.db.SessionDB` (SQLite, the embedded
    default) and :class:`~hermes_core.layers.sessions.pg.PostgresSessionDB` (a PostgreSQL
    server). ``read`` takes portable SQL with ``?`` placeholders.
    """

    backend: str
    fts_enabled: bool
    fts_error: str | None
    index_char_cap: int
    redact_secrets: bool
    read_only_reason: str | None

    @property
    def location(self) -> str: ...
    @property
    def read_only(self) -> bool: ...
    def close(self) -> None: ...
    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]: ...
    def write(self, fn: Callable[[Any], T]) -> T: ...
    def transaction(self) -> contextlib.AbstractContextManager[None]: ...
    def has_table(self, name: str) -> bool: ...
    def schema_version(self) -> int: ...
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
    ) -> None: ...
    def ensure_session(self, session_id: str, **fields: Any) -> None: ...
    def record_system_prompt(
        self, session_id: str, text: str, *, user_id: str | None = None
    ) -> None: ...
    def end_session(self, session_id: str, reason: str = "user_exit") -> None: ...
    def reopen_session(self, session_id: str) -> None: ...
    def set_title(self, session_id: str, title: str) -> str | None: ...
    def resolve_session(
        self, ref: str, *, user_id: UserScope, hidden_sources: Sequence[str] = ()
    ) -> str | None: ...
    def get_session(self, session_id: str, *, user_id: UserScope) -> SessionRecord | None: ...
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
        user_id: UserScope,
    ) -> list[SessionRecord]: ...
    def count_sessions(self, *, user_id: UserScope) -> int: ...
    def lineage(self, session_id: str, *, user_id: UserScope) -> list[str]: ...
    def lineage_root(self, session_id: str) -> str: ...
    def sessions_titled(
        self,
        words: Sequence[str],
        *,
        user_id: UserScope,
        hidden_sources: Sequence[str] = (),
        exclude: Sequence[str] = (),
        limit: int = 5,
    ) -> list[tuple[str, int]]: ...
    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Any],
        *,
        timestamp: float | None = None,
        source: str = "cli",
        user_id: UserScope,
        turn_key: str | None = None,
    ) -> list[int]: ...
    def add_token_usage(self, session_id: str, input_tokens: int, output_tokens: int) -> None: ...
    def get_messages(
        self, session_id: str, *, include_inactive: bool = False
    ) -> list[StoredMessage]: ...
    def get_message(self, message_id: int) -> StoredMessage | None: ...
    def mark_compacted(self, session_id: str, message_ids: Iterable[int]) -> int: ...
    def mark_rewound(self, session_id: str, message_ids: Iterable[int]) -> int: ...
    def delete_sessions(self, session_ids: Sequence[str]) -> int: ...
    def sessions_older_than(
        self, cutoff: float, *, user_id: UserScope, source: str | None = None
    ) -> list[str]: ...
    def reindex(self) -> int: ...
    def stats(self, *, user_id: UserScope) -> dict[str, Any]: ...
    def user_scopes(self) -> list[dict[str, Any]]: ...
    def speaker_names(self, *, user_id: UserScope) -> frozenset[str]: ...
    def iter_all_session_ids(self) -> Iterator[str]: ...
    def fts_count(self, match: str, floor: int = 0, cap: int | None = None) -> int: ...
    def fts_rowids(self, match: str, floor: int = 0) -> list[int]: ...
    def fts_window_rows(
        self, match: str, floor: int, where: str, params: Sequence[Any]
    ) -> RankedRows: ...
    def fts_ranked(
        self, match: str, where: str, params: Sequence[Any], limit: int
    ) -> tuple[RankedRows, int | None]: ...
    def month_sql(self, column: str) -> str: ...
    def import_rows(
        self, sessions: Sequence[Sequence[Any]], messages: Sequence[Sequence[Any]]
    ) -> tuple[int, int]: ...
    def merge_rows(
        self, sessions: Sequence[Sequence[Any]], messages: Sequence[Sequence[Any]]
    ) -> tuple[int, int]: ...
    def counts_by_user(self) -> dict[str | None, tuple[int, int]]: ...


def _claim(conn: Any, session_id: str, user: str | None) -> None:
    """Raise unless ``session_id`` is new or already belongs to ``user`` (and ``user`` is an
    id every backend stores exactly: :func:`hermes_core.scope.check_user_id`)."""
    check_user_id(user)
    row = conn.execute("SELECT user_id FROM sessions WHERE id=?", (session_id,)).fetchone()
    if row is not None and row[0] != user:
        raise SessionStoreError(
            f"session id {session_id!r} is already used in another user scope; session ids "
            "are never shared across users — open the session with a new id"
        )


def _copy_session_sql() -> str:
    cols = COPY_SESSION_COLUMNS.split(", ")
    updates = ", ".join(f"{c}=excluded.{c}" for c in cols if c != "id")
    return (
        f"INSERT INTO sessions({COPY_SESSION_COLUMNS}) VALUES ({','.join('?' * len(cols))}) "
        f"ON CONFLICT(id) DO UPDATE SET {updates}"
    )


_COPY_SESSION_SQL = _copy_session_sql()
"""Upsert of one session row read with :data:`COPY_SESSION_COLUMNS` (copy and merge)."""


def same_start(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Same ``(user_id, started_at)`` (to the microsecond): one session seen twice."""
    if a[0] != b[0] or (a[1] is None) != (b[1] is None):
        return False
    return a[1] is None or abs(float(a[1]) - float(b[1])) < 1e-6


class ArchiveBase:
    """The archive's behaviour on top of a backend's connection (see the module docstring).

    A backend sets :attr:`backend`, :attr:`SEQ` (the column that orders sessions inserted at
    the same instant), :attr:`LIKE_CI` (a case-insensitive ``LIKE``) and implements
    :meth:`read`, :meth:`write`, :meth:`transaction`, :meth:`_insert_messages` and the
    full-text methods (``fts_*``, :meth:`month_sql`).
    """

    backend: str = "abstract"
    SEQ = "s.rowid"
    LIKE_CI = "LIKE"
    UNINDEXED = "+"
    """Prefix that keeps the query planner from using an index on a column (SQLite's unary
    ``+``; empty where the planner needs no hint)."""
    fts_enabled: bool = False
    fts_error: str | None = None
    index_char_cap: int = 8192
    redact_secrets: bool = True
    read_only_reason: str | None = None

    def __init__(self) -> None:
        self._speakers: dict[object, tuple[int, frozenset[str]]] = {}

    # -- backend hooks ---------------------------------------------------------------

    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        """Run a read-only query; returns all rows."""
        raise NotImplementedError

    def write(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(conn)`` in a write transaction, committed before returning."""
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """Group this thread's writes into one transaction."""
        raise NotImplementedError

    def _insert_messages(
        self, conn: Any, rows: Sequence[MessageRow], turn_key: str | None
    ) -> list[int]:
        """Insert prepared rows (and index them); the new ids in order."""
        raise NotImplementedError

    @property
    def read_only(self) -> bool:
        """True when this archive is only read (newer schema or another program's file)."""
        return self.read_only_reason is not None

    def _check_writable(self) -> None:
        if self.read_only_reason is not None:
            raise SessionStoreReadOnly(self.read_only_reason)

    def __enter__(self) -> ArchiveBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the backend's connections."""
        raise NotImplementedError

    def _index_message(self, conn: Any, message_id: int, body: str, meta: str) -> None:
        """Index one message copied in with its id (:meth:`import_rows`)."""
        raise NotImplementedError

    def _after_import(self, conn: Any) -> None:
        """Bring id generators past the ids copied in (nothing to do on SQLite)."""

    # -- copying between archives (``hermes-memory sessions migrate``) ------------------------

    def import_rows(
        self, sessions: Sequence[Sequence[Any]], messages: Sequence[Sequence[Any]]
    ) -> tuple[int, int]:
        """Copy rows read with :data:`COPY_SESSION_COLUMNS`/:data:`COPY_MESSAGE_COLUMNS` from
        another archive, keeping their ids, in one transaction. Idempotent: a session row is
        upserted (the copy's values win), a message already present under its id only gets
        its ``active``/``compacted`` flags refreshed. A message id held by another session,
        or a session id held by another user, raises :class:`SessionStoreError` and nothing
        is written (copy into an empty archive). Returns ``(sessions new, messages new)``."""
        self._check_writable()
        session_sql = _COPY_SESSION_SQL
        mcols = COPY_MESSAGE_COLUMNS.split(", ")
        message_sql = (
            f"INSERT INTO messages({COPY_MESSAGE_COLUMNS}) VALUES ({','.join('?' * len(mcols))}) "
            "ON CONFLICT(id) DO NOTHING"
        )
        pos = {c: i for i, c in enumerate(mcols)}

        def do(conn: Any) -> tuple[int, int]:
            new_sessions = 0
            for row in sessions:
                got = conn.execute("SELECT user_id FROM sessions WHERE id=?", (row[0],)).fetchone()
                if got is None:
                    new_sessions += 1
                elif got[0] != row[2]:
                    raise SessionStoreError(
                        f"session {row[0]!r} already exists here for another user: this "
                        "archive holds another one; add to it with `--merge`"
                    )
                conn.execute(session_sql, list(row))
            new_messages = 0
            for mrow in messages:
                mid, sid = int(mrow[pos["id"]]), mrow[pos["session_id"]]
                if conn.execute(message_sql, list(mrow)).rowcount == 1:
                    new_messages += 1
                    self._index_copied(conn, mid, mrow, pos)
                    continue
                held = conn.execute("SELECT session_id FROM messages WHERE id=?", (mid,)).fetchone()
                if held is None or held[0] != sid:
                    raise SessionStoreError(
                        f"message id {mid} is already used here by another session: this "
                        "archive holds another one; add to it with `--merge` (message ids are "
                        "renumbered)"
                    )
                conn.execute(
                    "UPDATE messages SET active=?, compacted=? WHERE id=?",
                    (mrow[pos["active"]], mrow[pos["compacted"]], mid),
                )
            self._after_import(conn)
            return new_sessions, new_messages

        result = self.write(do)
        self._speakers.clear()
        return result

    def _index_copied(self, conn: Any, mid: int, mrow: Sequence[Any], pos: dict[str, int]) -> None:
        """Index a message row copied in (read with :data:`COPY_MESSAGE_COLUMNS`) as ``mid``."""
        _, body, meta = indexed_text(
            (
                mid,
                mrow[pos["content"]],
                mrow[pos["name"]],
                mrow[pos["tool_name"]],
                mrow[pos["tool_calls"]],
            ),
            self.index_char_cap,
        )
        self._index_message(conn, mid, body, meta)

    def merge_rows(
        self, sessions: Sequence[Sequence[Any]], messages: Sequence[Sequence[Any]]
    ) -> tuple[int, int]:
        """Add rows read with :data:`COPY_SESSION_COLUMNS`/:data:`COPY_MESSAGE_COLUMNS` from
        another archive to this one, which may hold others (``sessions migrate --merge``),
        in one transaction. Session ids are kept as given (the caller maps colliding ones
        away first); messages get new ids from this archive, in their source order. A
        session already here (same id, user and start) only gets the messages beyond those
        it holds (matched by position) and their ``active``/``compacted`` flags refreshed,
        so a re-run adds nothing. A session id held here by a different session raises
        :class:`SessionStoreError` and nothing is written. Returns ``(sessions new,
        messages new)``."""
        self._check_writable()
        cols = COPY_SESSION_COLUMNS.split(", ")
        session_sql = _COPY_SESSION_SQL
        mcols = COPY_MESSAGE_COLUMNS.split(", ")
        pos = {c: i for i, c in enumerate(mcols)}
        kept = [c for c in mcols if c != "id"]
        message_sql = (
            f"INSERT INTO messages({', '.join(kept)}) VALUES ({','.join('?' * len(kept))}) "
            "RETURNING id"
        )
        spos = {c: i for i, c in enumerate(cols)}
        by_session: dict[Any, list[Sequence[Any]]] = {}
        for mrow in messages:
            by_session.setdefault(mrow[pos["session_id"]], []).append(mrow)

        def do(conn: Any) -> tuple[int, int]:
            new_sessions = new_messages = 0
            for row in sessions:
                got = conn.execute(
                    "SELECT user_id, started_at FROM sessions WHERE id=?", (row[0],)
                ).fetchone()
                if got is None:
                    new_sessions += 1
                elif not same_start(got, (row[spos["user_id"]], row[spos["started_at"]])):
                    raise SessionStoreError(
                        f"session {row[0]!r} already exists here as a different session "
                        "(another user or start); nothing was written"
                    )
                conn.execute(session_sql, list(row))
            for sid, rows in by_session.items():
                held = [
                    int(r[0])
                    for r in conn.execute(
                        "SELECT id FROM messages WHERE session_id=? ORDER BY id", (sid,)
                    ).fetchall()
                ]
                for i, mrow in enumerate(rows):
                    if i < len(held):
                        conn.execute(
                            "UPDATE messages SET active=?, compacted=? WHERE id=?",
                            (mrow[pos["active"]], mrow[pos["compacted"]], held[i]),
                        )
                        continue
                    values = [mrow[pos[c]] for c in kept]
                    mid = int(conn.execute(message_sql, values).fetchone()[0])
                    new_messages += 1
                    self._index_copied(conn, mid, mrow, pos)
            return new_sessions, new_messages

        result = self.write(do)
        self._speakers.clear()
        return result

    def counts_by_user(self) -> dict[str | None, tuple[int, int]]:
        """``{user_id: (sessions, messages)}`` over every user scope (for verification)."""
        out: dict[str | None, tuple[int, int]] = {
            r[0]: (int(r[1]), 0)
            for r in self.read("SELECT user_id, COUNT(*) FROM sessions GROUP BY user_id")
        }
        for uid, n in self.read(
            "SELECT s.user_id, COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id "
            "GROUP BY s.user_id"
        ):
            out[uid] = (out.get(uid, (0, 0))[0], int(n))
        return out

    # -- sessions --------------------------------------------------------------------

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
        check_user_id(user_id)  # refused, never stored altered (the same on both backends)
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

        def do(conn: Any) -> None:
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
        check_user_id(fields.get("user_id"))
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

        def do(conn: Any) -> None:
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

    def _set_title(self, conn: Any, session_id: str, title: str) -> str | None:
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
        self, ref: str, *, user_id: UserScope, hidden_sources: Sequence[str] = ()
    ) -> str | None:
        """A session id from an id, a unique id prefix (≥4 chars) or a title (the newest
        ``title #N`` variant wins), looking only at sessions in ``user_id``'s scope and not
        from ``hidden_sources``: anything else answers ``None`` exactly like a missing id."""
        if not isinstance(ref, str):
            return None
        ref = ref.strip()
        if ref.startswith("@session:"):
            ref = ref.split("/", 1)[-1]
        if not ref or len(ref) > MAX_REF_CHARS:
            return None  # ids are ≤ 256 characters; titles are shorter than this too
        scope, params = scope_sql(user_id)
        if hidden_sources:
            scope += f" AND source NOT IN ({','.join('?' * len(hidden_sources))})"
            params = [*params, *hidden_sources]
        if self.read(f"SELECT 1 FROM sessions WHERE id=? AND {scope}", (ref, *params)):
            return ref
        rows = self.read(
            f"SELECT id FROM sessions WHERE (title=? OR title {self.LIKE_CI} ? ESCAPE '\\') "
            f"AND {scope} "
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

    def get_session(self, session_id: str, *, user_id: UserScope) -> SessionRecord | None:
        """The session row, or ``None`` (also when it is outside ``user_id``'s scope)."""
        scope, params = scope_sql(user_id)
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
        user_id: UserScope,
    ) -> list[SessionRecord]:
        """Sessions newest first (or oldest first), each with ``last_active``, of ``user_id``'s
        scope only.

        ``tool`` keeps sessions with a message that called or came from that tool, counting
        the messages of the session's descendants too (a root is listed when a compressed or
        /new continuation of it used the tool)."""
        scope, scope_params = scope_sql(user_id, "s.user_id")
        where: list[str] = [scope]
        params: list[Any] = [*scope_params]
        if tool:
            where.append(
                "EXISTS (WITH RECURSIVE fam(id) AS (SELECT s.id UNION SELECT c.id FROM "
                "sessions c JOIN fam ON c.parent_session_id = fam.id "
                "WHERE COALESCE(c.user_id, '') = COALESCE(s.user_id, '')) SELECT 1 FROM messages m "
                "WHERE m.session_id IN (SELECT id FROM fam) "
                "AND (m.tool_name = ? OR instr(m.tool_calls, ?) > 0))"
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
            f"FROM sessions s {clause} ORDER BY s.started_at {order}, {self.SEQ} {order} "
            "LIMIT ? OFFSET ?",
            [*params, max(0, int(limit)), max(0, int(offset))],
        )
        return [session_from_row(row) for row in rows]

    def count_sessions(self, *, user_id: UserScope) -> int:
        """Number of sessions stored (in ``user_id``'s scope)."""
        scope, params = scope_sql(user_id)
        return int(self.read(f"SELECT COUNT(*) FROM sessions WHERE {scope}", params)[0][0])

    def lineage(self, session_id: str, *, user_id: UserScope) -> list[str]:
        """Every session connected to ``session_id`` by ``parent_session_id``: its ancestors
        (root first), itself, and all descendants. A lineage never crosses users: a parent or
        child link to a session of another user scope counts as dangling (so nobody can
        probe for other users' session ids by naming them as a parent). With ``user_id``, a
        start session outside that scope has no lineage but itself. Cycles are tolerated."""
        owner = self._owner(session_id)
        if owner is None or (not isinstance(user_id, AllUsers) and owner[0] != user_id):
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
        user_id: UserScope,
        hidden_sources: Sequence[str] = (),
        exclude: Sequence[str] = (),
        limit: int = 5,
    ) -> list[tuple[str, int]]:
        """``(session id, first message id)`` of sessions in ``user_id``'s scope whose title
        contains every one of ``words`` (case-insensitive), newest first; sessions from
        ``hidden_sources``, those in ``exclude`` and those without messages are left out."""
        if not words:
            return []
        if isinstance(user_id, AllUsers):
            scope, params = scope_sql(user_id, "s.user_id")
            clauses = [scope]
        else:
            # One user's titled sessions through the partial idx_sessions_user_title
            # (on SQLite ``+`` keeps the planner off idx_sessions_user, which walks every
            # session of the user, titled or not: 13 ms at 25k untitled sessions, 0.04 ms
            # this way).
            scope, params = scope_sql(user_id, f"{self.UNINDEXED}s.user_id")
            clauses = ["COALESCE(s.user_id, '') = ?", scope]
            params = [stored_user_id(user_id) or "", *params]
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
        return self.lineage(session_id, user_id=ALL_USERS)[0]

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
        user_id: UserScope,
        turn_key: str | None = None,
    ) -> list[int]:
        """Append OpenAI-style messages in one transaction (creating the session row when
        missing) and index them; returns the new message ids in order.

        Every message is stored: values are sanitised, never refused (:mod:`.sanitize`); an
        item that is not a message at all raises :class:`SessionStoreError` and nothing is
        written. Text is redacted unless :attr:`redact_secrets` is off. A message may carry
        ``timestamp``, ``token_count``, ``finish_reason``, ``reasoning`` and
        ``_active``/``_compacted`` overrides. With ``user_id`` (not :data:`ALL_USERS`) the
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
        owner = None if isinstance(user_id, AllUsers) else stored_user_id(user_id)
        src = as_text(source) or "cli"
        key = optional_text(turn_key)

        def do(conn: Any) -> list[int]:
            if not isinstance(user_id, AllUsers):
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
                "INSERT INTO sessions(id, source, user_id, started_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (session_id, src, owner, base_ts),
            )
            ids = self._insert_messages(conn, batch.rows, key)
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

        def clamped(value: int) -> tuple[int, int, int, int]:
            n = clamp_int(value, 0, cap) or 0
            return (n, cap, cap, n)

        self.write(
            lambda c: c.execute(
                "UPDATE sessions SET input_tokens = CASE WHEN input_tokens + ? > ? THEN ? "
                "ELSE input_tokens + ? END, output_tokens = CASE WHEN output_tokens + ? > ? "
                "THEN ? ELSE output_tokens + ? END WHERE id = ?",
                (*clamped(input_tokens), *clamped(output_tokens), session_id),
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

        def do(conn: Any) -> int:
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
        return int(
            self.write(
                lambda c: (
                    c.execute(
                        "UPDATE messages SET active=0, compacted=0 "
                        f"WHERE session_id=? AND id IN ({marks})",
                        [session_id, *ids],
                    ).rowcount
                )
            )
        )

    def sessions_older_than(
        self, cutoff: float, *, user_id: UserScope, source: str | None = None
    ) -> list[str]:
        """Ids of sessions (in ``user_id``'s scope, of ``source`` when given) whose last activity
        (or start) is before ``cutoff``."""
        scope, params = scope_sql(user_id, "s.user_id")
        if source is not None:
            scope += " AND s.source = ?"
            params = [*params, source]
        rows = self.read(
            "SELECT s.id FROM sessions s WHERE COALESCE((SELECT MAX(timestamp) FROM messages m "
            f"WHERE m.session_id = s.id), s.started_at) < ? AND {scope} ORDER BY s.started_at",
            (cutoff, *params),
        )
        return [r[0] for r in rows]

    def user_scopes(self) -> list[dict[str, Any]]:
        """Every user scope with sessions: ``user_id`` (``None``: no user), ``sessions`` and
        ``last_active`` (latest start), busiest first. For operators; never shown to a
        user's tool."""
        rows = self.read(
            "SELECT user_id, COUNT(*), MAX(started_at) FROM sessions GROUP BY user_id "
            "ORDER BY COUNT(*) DESC, user_id NULLS FIRST"
        )
        return [{"user_id": r[0], "sessions": int(r[1]), "last_active": r[2]} for r in rows]

    def speaker_names(self, *, user_id: UserScope) -> frozenset[str]:
        """Lower-cased words of every participant name (``messages.name``) in ``user_id``'s
        sessions. Cached per object and scope and brought up to date by reading only the
        messages added since (ids only grow), so a search after each turn does not rescan
        the archive; :meth:`delete_sessions` drops the cache."""
        newest = int(self.read("SELECT MAX(id) FROM messages")[0][0] or 0)
        key: object = user_id
        cached = self._speakers.get(key)
        if cached is not None and cached[0] == newest:
            return cached[1]
        since = cached[0] if cached is not None and cached[0] < newest else 0
        scope, params = scope_sql(user_id, "s.user_id")
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
    "COPY_MESSAGE_COLUMNS",
    "COPY_SESSION_COLUMNS",
    "MAX_REF_CHARS",
    "ArchiveBase",
    "RankedRows",
    "SessionStore",
    "same_start",
]
