"""Staged memory writes in PostgreSQL (``memory.store: postgresql``).

With the memory on a shared server, a write staged on one host (``memory.write_approval``,
background-review proposals) must be listable and approvable from every host — the chat
that staged it may be served by another worker than the one the user approves from. Records
are the same :class:`~.approval.PendingWrite` JSON as the file store's, one row each in
``hermes_memory_pending`` keyed by (``owner_key``, ``id``); every query filters by the owner
key, so a user lists, approves and rejects only their own. :meth:`claim` holds an advisory
lock per record, so two hosts approving the same record apply it once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_core.pg import advisory_key, require_driver

from .pending import PendingStore, PendingWrite, parse_record
from .pgstore import PENDING_TABLE, PostgresTarget, connect, failed, owner_key, owner_label

log = logging.getLogger(__name__)


class PostgresPendingStore(PendingStore):
    """The staged writes of one user, in the database of ``server``."""

    def __init__(self, home: Path, user_id: str | None = None, *, server: PostgresTarget) -> None:
        super().__init__(home, user_id)
        self.server = server
        self.key = owner_key(self.user_id)

    def _run(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        psycopg, _ = require_driver()
        with connect(self.server) as conn:
            try:
                cur = conn.execute(sql, params)
                return list(cur.fetchall()) if cur.description else []
            except psycopg.Error as exc:
                raise failed(self.server, exc) from exc

    def save(self, record: PendingWrite) -> None:
        self._run(
            f"INSERT INTO {PENDING_TABLE} (owner_key, id, user_id, record, created_at) "
            "VALUES (%s, %s, %s, %s, %s)",
            (
                self.key,
                record.id,
                owner_label(self.user_id),
                json.dumps(record.to_dict(), ensure_ascii=False),
                record.created_at,
            ),
        )

    def _parse(self, text: str) -> PendingWrite | None:
        try:
            record = parse_record(text)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring malformed pending memory write in the database: %s", exc)
            return None
        if record.user_id != self.user_id:
            log.warning("ignoring pending memory write %s: it belongs to another user", record.id)
            return None
        return record

    def get(self, pending_id: str) -> PendingWrite | None:
        if not self.valid_id(pending_id):
            return None
        rows = self._run(
            f"SELECT record FROM {PENDING_TABLE} WHERE owner_key = %s AND id = %s",
            (self.key, pending_id),
        )
        return self._parse(str(rows[0][0])) if rows else None

    def list(self) -> list[PendingWrite]:
        rows = self._run(
            f"SELECT record FROM {PENDING_TABLE} WHERE owner_key = %s ORDER BY created_at, id",
            (self.key,),
        )
        return [r for r in (self._parse(str(row[0])) for row in rows) if r is not None]

    def discard(self, pending_id: str) -> bool:
        if not self.valid_id(pending_id):
            return False
        rows = self._run(
            f"DELETE FROM {PENDING_TABLE} WHERE owner_key = %s AND id = %s RETURNING id",
            (self.key, pending_id),
        )
        return bool(rows)

    @contextmanager
    def claim(self, pending_id: str) -> Iterator[bool]:
        with connect(self.server) as conn, conn.transaction():
            lock = advisory_key("hermes-memory-pending", self.key, pending_id)
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
            row = conn.execute(
                f"SELECT 1 FROM {PENDING_TABLE} WHERE owner_key = %s AND id = %s",
                (self.key, pending_id),
            ).fetchone()
            yield row is not None


def pending_owner_ids(server: PostgresTarget) -> list[str]:
    """User ids with staged writes in the database (labels whose key matches)."""
    from hermes_core.scope import user_key

    psycopg, _ = require_driver()
    with connect(server) as conn:
        try:
            rows = conn.execute(
                f"SELECT DISTINCT owner_key, user_id FROM {PENDING_TABLE} WHERE owner_key <> ''"
            ).fetchall()
        except psycopg.Error as exc:
            raise failed(server, exc) from exc
    return sorted({str(uid) for key, uid in rows if user_key(str(uid)) == key})


__all__ = ["PostgresPendingStore", "pending_owner_ids"]
