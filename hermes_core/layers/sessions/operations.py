"""What the ``hermes-memory sessions`` commands do, as typed functions the CLI calls and
prints (the CLI only parses and prints).

Contract: every failure a user can meet is a :class:`~.errors.SessionStoreError` whose message
says what happened and how to fix it — the archive that cannot be opened (a file that is not
SQLite, a missing server), a SQLite error during a command (rolled back), a session reference
matching nothing (:class:`SessionNotFound`), an unreadable age (:class:`AgeError`), a migration
onto the archive being copied. No function here prints; long work reports through a
``progress(n)`` callback, notes for the operator through ``note(text)``.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from hermes_core.homefiles import inspect_state_db, own_db_path
from hermes_core.scope import ALL_USERS

from .archive import SessionStore
from .db import SessionDB
from .errors import SessionStoreError, SessionStoreUnusable
from .hermes_agent import import_hermes_agent, locate_state_db, session_stamps
from .migrate import MigrationReport, copy_archive, merge_archive
from .plugin import refresh_hermes_agent
from .search import SessionSearch
from .store import open_store, open_url

_AGE = re.compile(r"^\s*(\d+)\s*([dhwmy])\s*$", re.IGNORECASE)
_AGE_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400, "m": 30 * 86400, "y": 365 * 86400}

MAX_AGE_S = 200 * 365 * 86400
"""The largest age :func:`parse_age` accepts (200 years): anything older predates every
archive."""

PRUNE_CHUNK = 50
"""Sessions deleted per transaction by :func:`prune_sessions`."""


class SessionNotFound(SessionStoreError):
    """A session reference (id, id prefix or title) matches no session of the scope."""


class AgeError(SessionStoreError, ValueError):
    """An age like ``90d`` could not be read or is out of range; the message shows the form."""


def parse_age(text: str) -> float:
    """Seconds in ``90d`` / ``12h`` / ``2w`` / ``6m`` / ``1y`` (at most :data:`MAX_AGE_S`).
    Raises :class:`AgeError` naming the accepted form."""
    match = _AGE.match(text)
    if not match:
        raise AgeError(
            f"cannot read age '{text}' — use a number and a unit, e.g. 90d, 12h, 2w, 6m, 1y"
        )
    digits = match.group(1)
    seconds = int(digits) * _AGE_SECONDS[match.group(2).lower()] if len(digits) <= 12 else None
    if seconds is None or seconds > MAX_AGE_S:
        raise AgeError(f"age '{text[:40]}' is more than 200 years — use a smaller number, e.g. 10y")
    return seconds


def _index_hermes_agent(db: SessionStore, home: Path, note: Callable[[str], None]) -> None:
    """When ``home`` is a Hermes Agent home and the archive is our SQLite file, say so through
    ``note`` and index its sessions (read-only on its file)."""
    if not isinstance(db, SessionDB):
        return
    found = inspect_state_db(home)
    if not found.is_hermes_agent:
        return
    note(
        f"{found.describe()}: hermes-core reads it and never writes to it; its own "
        f"tables are in {db.path.name}"
    )
    refresh_hermes_agent(db, home)


def _open_configured(home: Path) -> SessionStore:
    from hermes_core.settings.base import load_settings

    try:
        sessions_settings: Any = load_settings(home).sessions
    except Exception:  # a broken config still lets the archive be read with defaults
        sessions_settings = None
    try:
        return open_store(home, sessions_settings)
    except SessionStoreUnusable:
        raise
    except (OSError, SessionStoreError) as exc:
        raise SessionStoreError(
            f"cannot open {own_db_path(home)}: {exc} — check the path and its permissions "
            "(HERMES_HOME)"
        ) from exc
    except sqlite3.DatabaseError as exc:
        path = own_db_path(home)
        raise SessionStoreUnusable(
            f"{path} is not a readable SQLite database ({exc}) — move it aside "
            f"(mv {path} {path}.bad) and rerun; a fresh archive is created, the old file kept"
        ) from exc


@contextmanager
def open_archive(
    home: Path, *, index: bool = True, note: Callable[[str], None] | None = None
) -> Iterator[SessionStore]:
    """The archive the settings of ``home`` name (``sessions.backend``), closed on exit.

    With ``index`` (the default), a Hermes Agent ``state.db`` in ``home`` is announced through
    ``note`` and its sessions indexed first. Raises :class:`~.errors.SessionStoreError` naming
    the fix when the archive cannot be opened; a SQLite error inside the block becomes a
    ``SessionStoreError`` saying the command's changes were rolled back."""
    db = _open_configured(Path(home))
    if index:
        _index_hermes_agent(db, Path(home), note or (lambda _text: None))
    try:
        yield db
    except sqlite3.Error as exc:
        raise SessionStoreError(
            f"state.db failed: {exc} — the command's changes were rolled back; check the "
            "disk (space, permissions) and `hermes-memory doctor`, then rerun"
        ) from exc
    finally:
        db.close()


def resolve_ref(db: SessionStore, ref: str, user_id: str | None) -> str:
    """The session id ``ref`` (id, id prefix or title) names in ``user_id``'s scope; raises
    :class:`SessionNotFound` saying how to list ids."""
    sid = db.resolve_session(ref, user_id=user_id or None)
    if sid is None:
        raise SessionNotFound(
            f"no session matches '{ref}' — list ids with `hermes-memory sessions list`"
            + (" (add --user USER_ID for a user's sessions)" if not user_id else "")
        )
    return str(sid)


def search_archive(
    db: SessionStore,
    query: str,
    *,
    limit: int,
    after: str | None = None,
    before: str | None = None,
    tool: str | None = None,
    role_filter: str | None = None,
    user_id: str | None = None,
) -> dict[str, Any]:
    """The ``session_search`` discover-mode result (``detail: full``, no hidden source) for
    ``query`` in ``user_id``'s scope; empty filters are left out. Never raises for bad
    filters: the result carries ``success: false`` and the error."""
    args: dict[str, Any] = {"query": query, "limit": limit, "detail": "full"}
    for key, value in (
        ("after", after),
        ("before", before),
        ("tool", tool),
        ("role_filter", role_filter),
    ):
        if value:
            args[key] = value
    return SessionSearch(db, hidden_sources=()).run(args, user_id=user_id or None)


def scope_session_ids(db: SessionStore, user_id: str | None, source: str | None) -> list[str]:
    """Every session id of ``user_id``'s scope (of ``source`` when given)."""
    return list(db.sessions_older_than(float("inf"), user_id=user_id or None, source=source))


def prune_sessions(
    db: SessionStore, ids: list[str], progress: Callable[[int], None] | None = None
) -> int:
    """Delete the sessions ``ids`` in transactions of :data:`PRUNE_CHUNK`; the messages
    deleted. ``progress(n)`` is called after each transaction with its session count."""
    removed = 0
    for start in range(0, len(ids), PRUNE_CHUNK):
        chunk = ids[start : start + PRUNE_CHUNK]
        removed += db.delete_sessions(chunk)
        if progress is not None:
            progress(len(chunk))
    return removed


def count_hermes_agent_sessions(path: Path) -> int:
    """Sessions in the Hermes Agent home or ``state.db`` at ``path`` (read-only). Raises
    :class:`~.hermes_agent.HermesAgentHomeError` naming what was found instead, or
    :class:`~.errors.SessionStoreError` when its file cannot be read."""
    try:
        return len(session_stamps(locate_state_db(path)))
    except sqlite3.Error as exc:
        raise SessionStoreError(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class AgentImportSummary:
    """What an import from a Hermes Agent home did: new sessions and their messages,
    continued sessions and the messages added, sessions already imported, renames."""

    rows: list[dict[str, Any]]
    total: int
    imported: int
    imported_messages: int
    continued: int
    added_messages: int
    unchanged: int


def import_from_hermes_agent(
    db: SessionStore,
    path: Path,
    *,
    total: int,
    user_id: str | None,
    keep_users: bool,
    progress: Callable[[int], None] | None = None,
) -> AgentImportSummary:
    """Import every session of the Hermes Agent home at ``path`` into ``db`` (see
    :func:`~.hermes_agent.import_hermes_agent`) and count what happened; ``total`` is
    :func:`count_hermes_agent_sessions`."""
    rows = [
        row.to_dict()
        for row in import_hermes_agent(
            cast(SessionDB, db),  # as the CLI always passed it: the configured archive
            path,
            user_id=user_id or None,
            keep_users=keep_users,
            progress=progress,
        )
    ]
    fresh = [r for r in rows if r["status"] == "imported"]
    grown = [r for r in rows if r["status"] == "continued"]
    return AgentImportSummary(
        rows=rows,
        total=total,
        imported=len(fresh),
        imported_messages=sum(int(r["messages"]) for r in fresh),
        continued=len(grown),
        added_messages=sum(int(r["messages"]) for r in grown),
        unchanged=len(rows) - len(fresh) - len(grown),
    )


def open_migration_source(
    home: Path, source_url: str | None, *, note: Callable[[str], None] | None = None
) -> contextlib.AbstractContextManager[SessionStore]:
    """The archive to copy from: ``source_url`` when given, else the configured one (see
    :func:`open_archive`, which ``note`` is passed to). Raises
    :class:`~.errors.SessionStoreError` naming the fix."""
    if source_url is not None:
        return contextlib.closing(open_url(source_url))
    return open_archive(home, note=note)


def migration_total(source: SessionStore, target: SessionStore) -> int:
    """Sessions (every user) ``source`` holds; raises :class:`~.errors.SessionStoreError`
    when ``target`` is ``source`` itself."""
    if source.location == target.location:
        raise SessionStoreError(
            f"--to names the archive being copied ({target.location}); pass another one"
        )
    return source.count_sessions(user_id=ALL_USERS)


def migrate_archive(
    source: SessionStore,
    target: SessionStore,
    *,
    merge: bool,
    batch: int,
    progress: Callable[[int], None] | None = None,
) -> MigrationReport:
    """Copy (or, with ``merge``, add) every session of ``source`` into ``target`` and verify
    the counts (:mod:`.migrate`). A failure is a :class:`~.errors.SessionStoreError` saying the
    rows copied so far are kept and a re-run resumes."""
    try:
        return (merge_archive if merge else copy_archive)(
            source, target, batch=batch, progress=progress
        )
    except SessionStoreError as exc:
        raise SessionStoreError(f"{exc} (rows copied so far are kept; re-run to resume)") from exc


__all__ = [
    "MAX_AGE_S",
    "AgeError",
    "AgentImportSummary",
    "SessionNotFound",
    "count_hermes_agent_sessions",
    "import_from_hermes_agent",
    "migrate_archive",
    "migration_total",
    "open_archive",
    "open_migration_source",
    "parse_age",
    "prune_sessions",
    "resolve_ref",
    "scope_session_ids",
    "search_archive",
]
