"""Forget a subject in one user's session archive (SQLite or PostgreSQL).

:func:`find_phrase` lists every message of the user's sessions whose text (content,
reasoning, tool calls, speaker name) contains a phrase (case-insensitive, Chinese too), and
every session whose title or recorded system prompt does. :func:`forget_phrase` deletes those
messages (their full-text index rows first), clears such titles and drops the lines of the
recorded system prompts that mention the phrase; then the full-text index is rebuilt from the
messages left (:func:`purge_index`), so no index segment keeps a token of what went.
:func:`forget_user` deletes every session of a user. Freed SQLite pages are overwritten by
the caller's ``VACUUM`` (the inspector's proof step does it for every SQLite file of the home).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .archive import SessionStore
from .records import UserScope, scope_sql
from .schema import fts_delete

PAGE = 2000
TEXT_COLUMNS = ("content", "reasoning", "tool_calls", "name")


@dataclass(frozen=True)
class ArchiveHit:
    """One match: ``kind`` (``message``, ``title``, ``system_prompt``), the session, the
    message id (0 for a session field) and the matching text."""

    kind: str
    session_id: str
    message_id: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "session_id": self.session_id,
            "message_id": self.message_id,
            "text": self.text,
        }


def _mentions(value: Any, needle: str) -> bool:
    return isinstance(value, str) and needle in value.casefold()


def find_phrase(store: SessionStore, user: UserScope, phrase: str) -> list[ArchiveHit]:
    """Every message and session field of ``user``'s sessions that mentions ``phrase``."""
    needle = phrase.casefold()
    scope, params = scope_sql(user, "s.user_id")
    hits: list[ArchiveHit] = []
    for row in store.read(
        f"SELECT s.id, s.title, s.system_prompt FROM sessions s WHERE {scope} ORDER BY s.id",
        params,
    ):
        if _mentions(row[1], needle):
            hits.append(ArchiveHit("title", str(row[0]), 0, str(row[1])))
        if _mentions(row[2], needle):
            lines = [line for line in str(row[2]).splitlines() if needle in line.casefold()]
            hits.append(ArchiveHit("system_prompt", str(row[0]), 0, "\n".join(lines)))
    last = -1
    columns = ", ".join(f"m.{c}" for c in TEXT_COLUMNS)
    while True:
        rows = store.read(
            f"SELECT m.id, m.session_id, {columns} FROM messages m JOIN sessions s "
            f"ON s.id = m.session_id WHERE {scope} AND m.id > ? ORDER BY m.id LIMIT ?",
            [*params, last, PAGE],
        )
        if not rows:
            return hits
        for row in rows:
            found = [str(v) for v in row[2:] if _mentions(v, needle)]
            if found:
                hits.append(ArchiveHit("message", str(row[1]), int(row[0]), found[0]))
        last = int(rows[-1][0])


def forget_phrase(store: SessionStore, user: UserScope, phrase: str) -> list[ArchiveHit]:
    """Delete what :func:`find_phrase` finds (see the module docstring), in one
    transaction; returns it. Call :func:`purge_index` afterwards."""
    hits = find_phrase(store, user, phrase)
    if not hits:
        return hits
    needle = phrase.casefold()
    ids = [h.message_id for h in hits if h.kind == "message"]
    titled = sorted({h.session_id for h in hits if h.kind == "title"})
    prompted = sorted({h.session_id for h in hits if h.kind == "system_prompt"})
    sqlite_fts = bool(getattr(store, "fts_enabled", False)) and store.has_table("messages_fts")

    def do(conn: Any) -> None:
        for start in range(0, len(ids), 200):
            chunk = ids[start : start + 200]
            marks = ",".join("?" * len(chunk))
            if sqlite_fts:
                fts_delete(conn, f"id IN ({marks})", list(chunk), store.index_char_cap)
            conn.execute(f"DELETE FROM messages WHERE id IN ({marks})", chunk)
        for session_id in {h.session_id for h in hits if h.kind == "message"}:
            conn.execute(
                "UPDATE sessions SET message_count = "
                "(SELECT COUNT(*) FROM messages WHERE session_id = ?) WHERE id = ?",
                (session_id, session_id),
            )
        for session_id in titled:
            conn.execute("UPDATE sessions SET title = NULL WHERE id = ?", (session_id,))
        for session_id in prompted:
            row = conn.execute(
                "SELECT system_prompt FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            text = str(row[0]) if row and row[0] is not None else ""
            kept = "\n".join(line for line in text.splitlines() if needle not in line.casefold())
            conn.execute("UPDATE sessions SET system_prompt = ? WHERE id = ?", (kept, session_id))

    store.write(do)
    return hits


def forget_user(store: SessionStore, user: UserScope) -> int:
    """Delete every session of ``user`` (messages and index rows too); returns how many."""
    scope, params = scope_sql(user)
    ids = [str(row[0]) for row in store.read(f"SELECT id FROM sessions WHERE {scope}", params)]
    store.delete_sessions(ids)
    return len(ids)


def purge_index(store: SessionStore) -> int:
    """Rebuild the full-text index from the messages left, so no segment of it keeps a
    token of a deleted message (a no-op count of 0 when the archive has no index)."""
    if not getattr(store, "fts_enabled", False):
        return 0
    return store.reindex()


__all__ = ["ArchiveHit", "find_phrase", "forget_phrase", "forget_user", "purge_index"]
