"""The inspector's view of mem0 in mode ``oss`` (local): list, forget and compact.

Works on the in-process ``mem0.Memory`` of :class:`~hermes_memory_mem0.oss.OssBackend` and
the files it writes below ``$HERMES_HOME/mem0``:

* memories are listed from the vector store (``memory.vector_store.list``), a user's
  expired-by-mem0 ones included; mem0 updates a memory in place and keeps the earlier text
  in its history table (``history.db``), so each earlier version is listed as a memory
  replaced by the current one (id ``<memory id>@<history id>``, replaced when the update
  happened);
* forgetting a memory deletes it through mem0 (which also unlinks it from mem0's entity
  collection, opened first so that cleanup runs), then deletes every history row of it and
  the extraction context mem0 keeps per scope (the ``messages`` table: the user's last
  messages, which may quote it);
* :func:`compact` blanks what chromadb's own write-ahead log (``embeddings_queue`` in
  ``mem0/chroma/chroma.sqlite3``) still holds of records no longer stored (documents and
  metadata; the vectors stay for a replay) and zeroes the unused capacity of the persisted
  vector index files, which can hold stray bytes of deleted text
  (:mod:`hermes_core.providers.hnsw_files`). The host then checkpoints and vacuums every
  SQLite file of the home, so a raw byte search finds nothing of a forgotten memory.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.providers.hnsw_files import scrub_unused_capacity
from hermes_core.providers.inspect import ProviderMemory

MAX_LISTED = 100_000
"""Memories listed per call at most (mem0's own vector store list is bounded too)."""


def _epoch(value: Any) -> float:
    if not isinstance(value, str) or not value:
        return 0.0
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _rows(listed: Any) -> list[Any]:
    """The records of a ``vector_store.list`` answer (mem0 wraps them in one list)."""
    if isinstance(listed, list | tuple) and listed and isinstance(listed[0], list | tuple):
        return list(listed[0])
    return list(listed or [])


def stored(memory: Any, user_id: str | None = None) -> list[Any]:
    """The vector store's records (of ``user_id``, or everyone's for ``None``)."""
    filters = {"user_id": user_id} if user_id else None
    return _rows(memory.vector_store.list(filters=filters, top_k=MAX_LISTED))


def users(memory: Any) -> list[str]:
    """User ids that have memories."""
    found = {(r.payload or {}).get("user_id") for r in stored(memory)}
    return sorted(str(u) for u in found if u)


def _history(memory: Any, memory_ids: Sequence[str]) -> list[sqlite3.Row | tuple[Any, ...]]:
    if not memory_ids:
        return []
    db = memory.db
    marks = ",".join("?" * len(memory_ids))
    with db._lock:
        return list(
            db.connection.execute(
                "SELECT id, memory_id, old_memory, new_memory, updated_at FROM history "
                f"WHERE memory_id IN ({marks}) AND event = 'UPDATE' ORDER BY updated_at DESC",
                list(memory_ids),
            )
        )


def memories(memory: Any, user_id: str, expiries: dict[str, float]) -> list[ProviderMemory]:
    """``user_id``'s memories, newest first, each earlier version (from mem0's history)
    listed as replaced by the current one."""
    current: list[ProviderMemory] = []
    for record in stored(memory, user_id):
        payload = record.payload or {}
        if payload.get("user_id") != user_id:
            continue
        current.append(
            ProviderMemory(
                id=str(record.id),
                text=str(payload.get("data", "")),
                created_at=_epoch(payload.get("created_at")),
                kind=str(payload.get("channel") or payload.get("role") or ""),
                source="mem0",
                expires_at=expiries.get(str(record.id)),
            )
        )
    earlier = [
        ProviderMemory(
            id=f"{row[1]}@{row[0]}",
            text=str(row[2] or ""),
            source="mem0 history",
            superseded_by=str(row[1]),
            replaced_at=_epoch(row[4]),
        )
        for row in _history(memory, [m.id for m in current])
        if row[2]
    ]
    current.sort(key=lambda m: m.created_at, reverse=True)
    return current + earlier


def _scope_pattern(user_id: str) -> str:
    """A LIKE pattern for mem0's session scopes (``agent_id=…&user_id=…``) of ``user_id``."""
    escaped = user_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%user\\_id={escaped}%"


def forget(memory: Any, user_id: str, memory_ids: Sequence[str]) -> int:
    """Delete these memories of ``user_id`` (current ones through mem0, earlier versions as
    history rows), their whole history and the user's extraction context; returns how many
    of the ids existed for the user."""
    own = {
        str(r.id) for r in stored(memory, user_id) if (r.payload or {}).get("user_id") == user_id
    }
    versions = {m.split("@", 1)[1]: m.split("@", 1)[0] for m in memory_ids if "@" in m}
    count = 0
    if own & set(memory_ids):
        _ = memory.entity_store  # opened, so mem0 unlinks deleted memories from entities
    for memory_id in memory_ids:
        if memory_id in own:
            memory.delete(memory_id)
            count += 1
    gone = [m for m in memory_ids if m in own]
    db = memory.db
    with db._lock, db.connection:
        conn = db.connection
        for history_id, memory_id in versions.items():
            if memory_id in own:
                count += conn.execute(
                    "DELETE FROM history WHERE id = ? AND memory_id = ?", (history_id, memory_id)
                ).rowcount
        if gone:
            marks = ",".join("?" * len(gone))
            conn.execute(f"DELETE FROM history WHERE memory_id IN ({marks})", gone)
        if count:
            _forget_context(conn, user_id)
    return count


def forget_user(memory: Any, user_id: str) -> int:
    """Delete every memory of ``user_id``, their history and the user's context."""
    ids = [
        str(r.id) for r in stored(memory, user_id) if (r.payload or {}).get("user_id") == user_id
    ]
    forget(memory, user_id, ids)
    with memory.db._lock, memory.db.connection as conn:
        _forget_context(conn, user_id)
    return len(ids)


def _forget_context(conn: sqlite3.Connection, user_id: str) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "messages" in tables:
        conn.execute(
            "DELETE FROM messages WHERE session_scope LIKE ? ESCAPE '\\'",
            (_scope_pattern(user_id),),
        )


def compact(chroma_dir: Path) -> int:
    """Blank the documents and metadata chromadb's write-ahead log keeps of records that
    are no longer stored, and zero the unused capacity of the vector index files below
    ``chroma_dir``; returns the log rows blanked (0 when there is no such file)."""
    scrub_unused_capacity(chroma_dir)
    path = chroma_dir / "chroma.sqlite3"
    if path.is_symlink() or not path.is_file():
        return 0
    with closing(sqlite3.connect(path, timeout=30.0)) as conn, conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if not {"embeddings_queue", "embeddings"} <= tables:
            return 0
        return conn.execute(
            "UPDATE embeddings_queue SET metadata = NULL WHERE metadata IS NOT NULL "
            "AND id NOT IN (SELECT embedding_id FROM embeddings)"
        ).rowcount


__all__ = ["compact", "forget", "forget_user", "memories", "stored", "users"]
