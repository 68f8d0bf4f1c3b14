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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_core.layers.sessions.archive import (
    COPY_MESSAGE_COLUMNS,
    COPY_SESSION_COLUMNS,
    SessionStore,
)

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


__all__ = ["BATCH_SESSIONS", "MigrationReport", "UserCounts", "copy_archive", "verify"]
