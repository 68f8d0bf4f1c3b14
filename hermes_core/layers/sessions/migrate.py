"""Copying a session archive to another backend (``hermes-memory sessions migrate``).

:func:`copy_archive` reads every session of ``source`` (all user scopes, oldest id first) with
its messages and writes them into ``target`` keeping every id (sessions, messages, turn keys,
titles, lineage links, compaction flags), :data:`BATCH_SESSIONS` sessions per transaction
(:meth:`~.archive.ArchiveBase.import_rows`). Safe to re-run: rows already copied are
recognised by id, so an interrupted copy resumes where it stopped and a finished one copies
nothing more. Afterwards the counts of sessions and messages per user are compared
(:class:`MigrationReport`). Full-text index entries are rebuilt in the target from the copied
text. Other layers' tables (compression events, memory archive, skill outcomes) stay where
they are: they are not part of the session archive.

:func:`merge_archive` (``migrate --merge``) adds an archive to a target that already holds
others (a second home joining a shared PostgreSQL archive): messages get new ids from the
target (:meth:`~.archive.ArchiveBase.merge_rows`); sessions keep their ids unless the target
holds a *different* session under the same id (another user or start), which is then stored
as ``<id>~<8 hex>`` (a digest of the session's user and start, so a re-run maps it to the
same id) with its children's ``parent_session_id`` following it, and reported. Re-runnable:
a session already merged only gets the messages it lacks, a finished merge adds nothing.
Verification compares, per user, the source's counts with the target's counts of the merged
sessions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core.layers.sessions.archive import (
    COPY_MESSAGE_COLUMNS,
    COPY_SESSION_COLUMNS,
    SessionStore,
    same_start,
)
from hermes_core.layers.sessions.errors import SessionStoreError

BATCH_SESSIONS = 50


@dataclass(slots=True)
class UserCounts:
    """Sessions and messages of one user scope in the source and the target."""

    user_id: str | None
    source_sessions: int
    source_messages: int
    target_sessions: int
    target_messages: int

    @property
    def ok(self) -> bool:
        """Whether the target holds exactly what the source holds for this user."""
        return (self.source_sessions, self.source_messages) == (
            self.target_sessions,
            self.target_messages,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "sessions": {"source": self.source_sessions, "target": self.target_sessions},
            "messages": {"source": self.source_messages, "target": self.target_messages},
            "ok": self.ok,
        }


@dataclass(slots=True)
class MigrationReport:
    """What :func:`copy_archive` did and what the verification found."""

    source: str
    target: str
    sessions_copied: int = 0
    messages_copied: int = 0
    sessions_seen: int = 0
    users: list[UserCounts] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    """Merge only: source session id → the id it got in the target (ids that collided)."""

    @property
    def verified(self) -> bool:
        """Every user scope has the same number of sessions and messages on both sides."""
        return all(u.ok for u in self.users)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "sessions_seen": self.sessions_seen,
            "sessions_copied": self.sessions_copied,
            "messages_copied": self.messages_copied,
            "verified": self.verified,
            "users": [u.to_dict() for u in self.users],
            "renamed": dict(self.renamed),
        }


def _marks(n: int) -> str:
    return ",".join("?" * n)


def verify(source: SessionStore, target: SessionStore) -> list[UserCounts]:
    """Per-user counts of both archives (every user scope of either side)."""
    src, dst = source.counts_by_user(), target.counts_by_user()
    users = sorted(set(src) | set(dst), key=lambda u: (u is not None, u or ""))
    return [UserCounts(u, *src.get(u, (0, 0)), *dst.get(u, (0, 0))) for u in users]


def copy_archive(
    source: SessionStore,
    target: SessionStore,
    *,
    batch: int = BATCH_SESSIONS,
    progress: Callable[[int], None] | None = None,
) -> MigrationReport:
    """Copy every session of ``source`` into ``target`` (see the module docstring) and verify
    the counts. ``progress(n)`` is called after each batch with the sessions it held."""
    report = MigrationReport(source.location, target.location)
    last: str | None = None
    while True:
        if last is None:
            rows = source.read(
                f"SELECT {COPY_SESSION_COLUMNS} FROM sessions ORDER BY id LIMIT ?", (batch,)
            )
        else:
            rows = source.read(
                f"SELECT {COPY_SESSION_COLUMNS} FROM sessions WHERE id > ? ORDER BY id LIMIT ?",
                (last, batch),
            )
        if not rows:
            break
        ids = [r[0] for r in rows]
        messages = source.read(
            f"SELECT {COPY_MESSAGE_COLUMNS} FROM messages WHERE session_id IN "
            f"({_marks(len(ids))}) ORDER BY id",
            ids,
        )
        new_sessions, new_messages = target.import_rows(
            [tuple(r) for r in rows], [tuple(m) for m in messages]
        )
        report.sessions_copied += new_sessions
        report.messages_copied += new_messages
        report.sessions_seen += len(rows)
        last = str(ids[-1])
        if progress is not None:
            progress(len(rows))
    report.users = verify(source, target)
    return report


_CHUNK = 500


def merged_id(session_id: str, user_id: str | None, started_at: Any) -> str:
    """The id a session gets in a merge target whose same id is another session."""
    digest = hashlib.sha256(f"{session_id}\x00{user_id}\x00{started_at!r}".encode()).hexdigest()
    return f"{session_id}~{digest[:8]}"


def _target_keys(target: SessionStore, ids: Sequence[str]) -> dict[str, tuple[Any, Any]]:
    found: dict[str, tuple[Any, Any]] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        for sid, user, started in target.read(
            f"SELECT id, user_id, started_at FROM sessions WHERE id IN ({_marks(len(chunk))})",
            chunk,
        ):
            found[str(sid)] = (user, started)
    return found


def plan_merge(source: SessionStore, target: SessionStore) -> dict[str, str]:
    """``{source id: target id}`` for the source sessions whose id the target holds as a
    different session (see the module docstring); raises :class:`SessionStoreError` when
    even the derived id is taken by another session."""
    keys = {
        str(sid): (user, started)
        for sid, user, started in source.read("SELECT id, user_id, started_at FROM sessions")
    }
    held = _target_keys(target, list(keys))
    clash = {
        sid: merged_id(sid, *keys[sid])
        for sid, key in held.items()
        if not same_start(key, keys[sid])
    }
    taken = _target_keys(target, list(clash.values()))
    for sid, new in clash.items():
        if new in taken and not same_start(taken[new], keys[sid]):
            raise SessionStoreError(
                f"session {sid!r} exists in the target as another session and so does {new!r}; "
                "rename one of them (sessions title/export+import) and re-run"
            )
    return clash


def merge_archive(
    source: SessionStore,
    target: SessionStore,
    *,
    batch: int = BATCH_SESSIONS,
    progress: Callable[[int], None] | None = None,
) -> MigrationReport:
    """Add every session of ``source`` to ``target``, which may hold other archives (see the
    module docstring), and verify the merged sessions' counts per user. ``progress(n)`` is
    called after each batch with the sessions it held."""
    report = MigrationReport(source.location, target.location)
    renamed = plan_merge(source, target)
    report.renamed = renamed
    scols = COPY_SESSION_COLUMNS.split(", ")
    parent = scols.index("parent_session_id")
    sid_at = COPY_MESSAGE_COLUMNS.split(", ").index("session_id")
    last: str | None = None
    while True:
        rows = source.read(
            f"SELECT {COPY_SESSION_COLUMNS} FROM sessions WHERE id > ? ORDER BY id LIMIT ?",
            ("" if last is None else last, batch),
        )
        if not rows:
            break
        ids = [str(r[0]) for r in rows]
        messages = source.read(
            f"SELECT {COPY_MESSAGE_COLUMNS} FROM messages WHERE session_id IN "
            f"({_marks(len(ids))}) ORDER BY id",
            ids,
        )
        mapped_sessions = []
        for r in rows:
            row = list(r)
            row[0] = renamed.get(str(row[0]), row[0])
            if row[parent] is not None:
                row[parent] = renamed.get(str(row[parent]), row[parent])
            mapped_sessions.append(tuple(row))
        mapped_messages = []
        for m in messages:
            mrow = list(m)
            mrow[sid_at] = renamed.get(str(mrow[sid_at]), mrow[sid_at])
            mapped_messages.append(tuple(mrow))
        new_sessions, new_messages = target.merge_rows(mapped_sessions, mapped_messages)
        report.sessions_copied += new_sessions
        report.messages_copied += new_messages
        report.sessions_seen += len(rows)
        last = ids[-1]
        if progress is not None:
            progress(len(rows))
    report.users = verify_merge(source, target, renamed)
    return report


def verify_merge(
    source: SessionStore, target: SessionStore, renamed: dict[str, str]
) -> list[UserCounts]:
    """Per user: the source's sessions and messages against the target's counts of those
    same sessions (under their merged ids)."""
    src = source.counts_by_user()
    ids = [renamed.get(str(r[0]), str(r[0])) for r in source.read("SELECT id FROM sessions")]
    dst: dict[str | None, tuple[int, int]] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = _marks(len(chunk))
        for user, n in target.read(
            f"SELECT user_id, COUNT(*) FROM sessions WHERE id IN ({marks}) GROUP BY user_id",
            chunk,
        ):
            have = dst.get(user, (0, 0))
            dst[user] = (have[0] + int(n), have[1])
        for user, n in target.read(
            "SELECT s.user_id, COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id "
            f"WHERE s.id IN ({marks}) GROUP BY s.user_id",
            chunk,
        ):
            have = dst.get(user, (0, 0))
            dst[user] = (have[0], have[1] + int(n))
    users = sorted(set(src) | set(dst), key=lambda u: (u is not None, u or ""))
    return [UserCounts(u, *src.get(u, (0, 0)), *dst.get(u, (0, 0))) for u in users]


__all__ = [
    "BATCH_SESSIONS",
    "MigrationReport",
    "UserCounts",
    "copy_archive",
    "merge_archive",
    "merged_id",
    "plan_merge",
    "verify",
    "verify_merge",
]
