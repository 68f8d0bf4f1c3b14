"""Sessions written by Hermes Agent: read in place, indexed into our archive, imported.

Hermes Agent (``hermes-agent`` 0.19.0, ``SessionDB`` schema 22) keeps its sessions in
``$HERMES_HOME/state.db``: ``sessions`` (id, source, user_id, model, system_prompt, title,
parent_session_id, started_at, ended_at, end_reason, …) and ``messages`` (id autoincrement,
role, content, tool_calls as JSON text, tool_call_id, tool_name, timestamp, token_count,
finish_reason, reasoning, active, compacted).

Contract:

* Its file is only ever opened with ``mode=ro`` connections
  (:func:`hermes_core.homefiles.connect_read_only`): no table, row, schema version, journal
  mode or pragma of it changes, and no lock is held beyond one read transaction. Each read is
  one consistent snapshot, so Hermes Agent may write at the same time (WAL readers).
* :func:`read_sessions` turns its rows into :class:`~.transfer.ImportGroup` objects (parents
  before children): titles, lineage (``parent_session_id``), tool calls (decoded to OpenAI
  ``tool_calls`` lists), tool results (``tool_call_id`` + ``name``), compaction flags.
* :func:`import_hermes_agent` copies them into our archive for good (``hermes-memory sessions
  import --from hermes-agent PATH``); a re-run writes nothing. A session imported before and
  continued in Hermes Agent since gets only its new messages appended (``continued``), not a
  second copy; a session the mirror holds (the home is also ours) is taken over as imported.
* :func:`index_hermes_agent` keeps a *mirror* of them in our own file so ``session_search``
  and ``hermes-memory sessions …`` find them: incremental (a session is re-copied only when its
  newest message id, message count or title changed), sessions Hermes Agent deleted drop out
  of the mirror; imported (owned) copies are never touched by it. The mirror's bookkeeping is
  the table ``hermes_agent_mirror`` in our file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.homefiles import STATE_DB, connect_read_only, inspect_db_file, inspect_state_db
from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.errors import SessionStoreError
from hermes_core.layers.sessions.transfer import (
    ImportedSession,
    ImportGroup,
    append_imported,
    group_digest,
    import_groups,
    stored_prefix,
)

SOURCE_NAME = "hermes-agent"
MIRROR_TABLE = "hermes_agent_mirror"
_SESSION_FIELDS = (
    "id",
    "source",
    "user_id",
    "model",
    "system_prompt",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "title",
)
_MESSAGE_FIELDS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "token_count",
    "finish_reason",
    "reasoning",
    "active",
    "compacted",
)
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


class HermesAgentHomeError(SessionStoreError):
    """The given path holds no Hermes Agent ``state.db``; the message says what was found."""


@dataclass(frozen=True, slots=True)
class AgentSession:
    """One Hermes Agent session as read: its :class:`ImportGroup`, its user and a change
    stamp (newest message id, message count, title)."""

    group: ImportGroup
    user_id: str | None
    stamp: str


def locate_state_db(path: Path) -> Path:
    """``path`` itself (a database file) or ``path/state.db`` (a home), checked to be
    Hermes Agent's; raises :class:`HermesAgentHomeError` naming what was found instead."""
    path = Path(path).expanduser()
    found = inspect_db_file(path / STATE_DB if path.is_dir() else path)
    if found.owner == "missing":
        raise HermesAgentHomeError(
            f"no Hermes Agent state.db at {path}: pass its home (e.g. ~/.hermes) or the "
            "state.db file itself"
        )
    if not found.is_hermes_agent:
        raise HermesAgentHomeError(
            f"{found.describe()}, not Hermes Agent's; `hermes-memory sessions import FILE` reads "
            "hermes-core exports and OpenAI message lists"
        )
    return found.path


def _decode_tool_calls(raw: Any) -> list[dict[str, Any]] | None:
    if raw in (None, ""):
        return None
    try:
        calls = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list):
        return None
    out = [c for c in calls if isinstance(c, dict)]
    return out or None


def _message(row: sqlite3.Row) -> dict[str, Any]:
    role = str(row["role"])
    msg: dict[str, Any] = {"role": role if role in _ROLES else "assistant"}
    msg["content"] = row["content"]
    calls = _decode_tool_calls(row["tool_calls"])
    if calls:
        msg["tool_calls"] = calls
    if row["tool_call_id"]:
        msg["tool_call_id"] = str(row["tool_call_id"])
    if row["tool_name"]:
        msg["name"] = str(row["tool_name"])
    if isinstance(row["timestamp"], int | float):
        msg["timestamp"] = float(row["timestamp"])
    if isinstance(row["token_count"], int) and row["token_count"] >= 0:
        msg["token_count"] = row["token_count"]
    for name in ("finish_reason", "reasoning"):
        if isinstance(row[name], str) and row[name]:
            msg[name] = row[name]
    if row["active"] is not None:
        msg["active"] = bool(row["active"])
    if row["compacted"] is not None:
        msg["compacted"] = bool(row["compacted"])
    return msg


def _select(conn: sqlite3.Connection, table: str, wanted: Iterable[str]) -> str:
    have = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}
    return ", ".join(c if c in have else f"NULL AS {c}" for c in wanted)


def _stamp(newest: Any, count: Any, title: Any, ended: Any) -> str:
    return f"{int(newest or 0)}:{int(count or 0)}:{title or ''}:{ended or ''}"


def session_stamps(state_db: Path) -> dict[str, str]:
    """``{session id: change stamp}`` of every Hermes Agent session (one cheap aggregate
    query over a ``mode=ro`` connection; the stamp changes when a message is added or
    removed, or the title or end changes)."""
    conn = connect_read_only(state_db)
    try:
        rows = conn.execute(
            "SELECT s.id, (SELECT MAX(m.id) FROM messages m WHERE m.session_id = s.id), "
            "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id), s.title, s.ended_at "
            "FROM sessions s"
        ).fetchall()
    finally:
        conn.close()
    return {str(r[0]): _stamp(r[1], r[2], r[3], r[4]) for r in rows}


def read_sessions(state_db: Path, *, only: set[str] | None = None) -> list[AgentSession]:
    """Every session in Hermes Agent's ``state_db`` (or those in ``only``), parents first,
    read in one snapshot over a ``mode=ro`` connection."""
    conn = connect_read_only(state_db)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("BEGIN")  # one read snapshot for sessions and messages
        session_rows = conn.execute(
            f"SELECT {_select(conn, 'sessions', _SESSION_FIELDS)} FROM sessions "
            "ORDER BY started_at, id"
        ).fetchall()
        wanted = [str(r["id"]) for r in session_rows if only is None or str(r["id"]) in only]
        by_session: dict[str, list[sqlite3.Row]] = {}
        columns = _select(conn, "messages", _MESSAGE_FIELDS)
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(
                f"SELECT {columns} FROM messages WHERE session_id IN ({marks}) "
                "ORDER BY session_id, timestamp, id",
                chunk,
            ):
                by_session.setdefault(str(row["session_id"]), []).append(row)
        conn.execute("COMMIT")
    finally:
        conn.close()
    known = {str(r["id"]) for r in session_rows}
    out: list[AgentSession] = []
    for row in _parents_first(session_rows):
        sid = str(row["id"])
        if only is not None and sid not in only:
            continue
        fields: dict[str, Any] = {
            name: row[name]
            for name in _SESSION_FIELDS
            if name != "user_id" and row[name] is not None
        }
        if fields.get("parent_session_id") not in known:
            fields.pop("parent_session_id", None)
        for name in ("started_at", "ended_at"):
            if name in fields and not isinstance(fields[name], int | float):
                fields.pop(name)
        messages = by_session.get(sid, [])
        newest = max((int(m["id"]) for m in messages), default=0)
        stamp = _stamp(newest, len(messages), row["title"], row["ended_at"])
        group = ImportGroup(fields=fields, messages=[_message(m) for m in messages])
        user = row["user_id"]
        out.append(AgentSession(group, str(user) if user else None, stamp))
    return out


def _parents_first(rows: list[sqlite3.Row]) -> list[sqlite3.Row]:
    by_id = {str(r["id"]): r for r in rows}
    done: set[str] = set()
    ordered: list[sqlite3.Row] = []

    def visit(sid: str, trail: set[str]) -> None:
        if sid in done or sid in trail or sid not in by_id:
            return
        parent = by_id[sid]["parent_session_id"]
        if parent:
            visit(str(parent), trail | {sid})
        done.add(sid)
        ordered.append(by_id[sid])

    for row in rows:
        visit(str(row["id"]), set())
    return ordered


def _import(
    db: SessionDB,
    sessions: list[AgentSession],
    user_id: str | None,
    keep_users: bool,
    progress: Callable[[int], None] | None,
    *,
    continue_owned: bool = False,
) -> list[ImportedSession]:
    report: list[ImportedSession] = []
    with db.transaction():
        for session in sessions:
            user = session.user_id if keep_users else user_id
            more = _continue(db, session.group, user, progress) if continue_owned else None
            report += (
                [more]
                if more
                else import_groups(
                    db, [session.group], source=SOURCE_NAME, user_id=user, progress=progress
                )
            )
    return report


def _continue(
    db: SessionDB,
    group: ImportGroup,
    user_id: str | None,
    progress: Callable[[int], None] | None,
) -> ImportedSession | None:
    """Append what Hermes Agent added to a session imported before (same id, imported, in
    this scope, its stored transcript a prefix of Hermes Agent's); ``None`` when that is not
    the case (a new session, one already complete, or one that differs: import decides)."""
    sid = str(group.fields.get("id") or "")
    record = db.get_session(sid, user_id=user_id) if sid else None
    if record is None:
        return None
    if not db.read("SELECT 1 FROM sessions WHERE id=? AND import_digest IS NOT NULL", (sid,)):
        return None  # a session of our own that happens to share the id
    have = stored_prefix(db, sid, group.messages)
    if have is None or have == len(group.messages):
        return None
    new = group.messages[have:]
    started = record.started_at
    append_imported(db, sid, new, started=float(started), user_id=user_id, progress=progress)
    digest = group_digest(group)
    db.write(lambda c: c.execute("UPDATE sessions SET import_digest=? WHERE id=?", (digest, sid)))
    title = group.fields.get("title")
    if isinstance(title, str) and title and title != record.title:
        db.set_title(sid, title)
    if group.fields.get("ended_at") and record.ended_at is None:
        db.end_session(sid, str(group.fields.get("end_reason") or "imported"))
    return ImportedSession(sid, len(new), None, "continued")


def import_hermes_agent(
    db: SessionDB,
    path: Path,
    *,
    user_id: str | None = None,
    keep_users: bool = False,
    progress: Callable[[int], None] | None = None,
) -> list[ImportedSession]:
    """Copy every session of the Hermes Agent home (or ``state.db``) at ``path`` into ``db``,
    in one transaction, into ``user_id``'s scope (or each session's own ``user_id`` with
    ``keep_users``). Imported copies are ours: the mirror stops tracking them.

    A session imported before that Hermes Agent continued since gets only the new messages
    (status ``continued``). A session our mirror of this home holds (any ``sessions``
    command indexes it when the home is also ours) is replaced by the imported copy and
    reported ``imported``, never ``already imported``."""
    state_db = locate_state_db(path)
    sessions = read_sessions(state_db)
    with db.transaction():
        if db.has_table(MIRROR_TABLE):
            mirrored = [str(r[0]) for r in db.read(f"SELECT session_id FROM {MIRROR_TABLE}")]
            wanted = {str(s.group.fields.get("id")) for s in sessions}
            adopt = [sid for sid in mirrored if sid in wanted]
            if adopt:
                db.delete_sessions(adopt)
                db.write(
                    lambda c: c.executemany(
                        f"DELETE FROM {MIRROR_TABLE} WHERE session_id=?", [(i,) for i in adopt]
                    )
                )
        report = _import(db, sessions, user_id, keep_users, progress, continue_owned=True)
        if db.has_table(MIRROR_TABLE):
            ids = [row.session_id for row in report]
            db.write(
                lambda c: c.executemany(
                    f"DELETE FROM {MIRROR_TABLE} WHERE session_id=?", [(i,) for i in ids]
                )
            )
    return report


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What :func:`index_hermes_agent` did."""

    state_db: Path
    indexed: int
    removed: int
    unchanged: int


def _ensure_mirror(db: SessionDB) -> None:
    db.write(
        lambda c: c.execute(
            f"CREATE TABLE IF NOT EXISTS {MIRROR_TABLE} ("
            "session_id TEXT PRIMARY KEY, stamp TEXT NOT NULL, indexed_at REAL NOT NULL)"
        )
    )


def index_hermes_agent(db: SessionDB, home: Path) -> IndexReport | None:
    """Bring the mirror of ``home``'s Hermes Agent sessions up to date in ``db`` (our own
    file); ``None`` when ``home`` has no Hermes Agent ``state.db`` or ``db`` is read-only.
    Each session keeps Hermes Agent's ``user_id`` (its isolation holds here too)."""
    import time

    if db.read_only:
        return None
    found = inspect_state_db(home)
    if not found.is_hermes_agent or found.path.resolve() == db.path.resolve():
        return None
    if not db.has_table(MIRROR_TABLE):
        _ensure_mirror(db)
    rows = db.read(f"SELECT session_id, stamp FROM {MIRROR_TABLE}")
    mirrored = {str(r[0]): str(r[1]) for r in rows}
    present = {str(r[0]) for r in db.read("SELECT id FROM sessions")}
    current = session_stamps(found.path)
    wanted = {
        sid
        for sid, stamp in current.items()
        if (sid in mirrored and mirrored[sid] != stamp) or sid not in present
    }
    gone = [sid for sid in mirrored if sid not in current]
    if not wanted and not gone:
        return IndexReport(found.path, 0, 0, len(current))
    changed = read_sessions(found.path, only=wanted) if wanted else []
    stale = [sid for sid in (str(s.group.fields.get("id")) for s in changed) if sid in mirrored]
    with db.transaction():
        drop = [sid for sid in gone + stale if sid in present]
        if drop:
            db.delete_sessions(drop)
        db.write(
            lambda c: c.executemany(
                f"DELETE FROM {MIRROR_TABLE} WHERE session_id=?", [(i,) for i in gone + stale]
            )
        )
        report = _import(db, changed, None, True, None)
        now = time.time()
        rows = [
            (r.session_id, s.stamp, now)
            for r, s in zip(report, changed, strict=True)
            if r.status == "imported" and r.renamed_from is None
        ]
        db.write(
            lambda c: c.executemany(f"INSERT OR REPLACE INTO {MIRROR_TABLE} VALUES (?, ?, ?)", rows)
        )
    return IndexReport(found.path, len(rows), len(gone), len(current) - len(changed))


__all__ = [
    "MIRROR_TABLE",
    "SOURCE_NAME",
    "AgentSession",
    "HermesAgentHomeError",
    "IndexReport",
    "import_hermes_agent",
    "index_hermes_agent",
    "locate_state_db",
    "read_sessions",
]
