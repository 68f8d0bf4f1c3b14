"""MEMORY.md / USER.md in PostgreSQL (``memory.store: postgresql``): one row per owner and file.

Several hosts (a gateway, worker machines, a team's agents) then share one user's memory with
the semantics of the file store, because the row holds exactly the bytes the file would hold
and every rule is the file store's own code (:mod:`.store`: parsing, limits, ``§`` entries,
duplicates, the drift guard; :mod:`.engine`: what a write does):

* Table ``hermes_memory_files``: ``owner_key`` (``""`` for the no-user file, else
  :func:`hermes_core.scope.user_key` of the id — the directory name the file store uses),
  ``user_id`` (the id, readable), ``target`` (``memory``/``user``), ``content`` (BYTEA: the
  UTF-8 bytes of the file, so anything a file can hold round-trips byte for byte), and
  ``updated_at``. Created by :func:`hermes_core.pg.migrate` (component ``memory``).
* Writes are serialised per owner and file by ``pg_advisory_xact_lock`` keyed by
  (``hermes-memory``, owner key, target): the row is re-read under the lock, mutated and
  written in one transaction, so concurrent writers on any number of hosts lose nothing and
  the budget holds. Different users never wait for each other.
* Every query filters by ``owner_key``: one user never reads or writes another's rows.
* A server that cannot be reached (or a statement that fails) refuses the write with a
  :class:`~.store.StoreRefusal` whose error names the redacted URL and the fix; nothing is
  changed and the turn goes on. A read that fails is a :class:`~.store.DiskState` with
  ``error`` (the snapshot leaves that file out and logs why).
* A row edited by hand into a form that would not round-trip is refused by the drift guard
  like a file; the row is left alone (the database keeps it; no ``.bak`` file is needed).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from hermes_core.errors import HermesError
from hermes_core.fsutil import atomic_write_bytes
from hermes_core.pg import (
    DatabaseUnavailable,
    PoolOptions,
    advisory_key,
    connection,
    migrate,
    redact_url,
    require_driver,
)
from hermes_core.scope import user_key, user_option
from hermes_core.types import MemoryTarget

from .store import (
    Change,
    DiskState,
    EditConflict,
    EntryStore,
    StoreRefusal,
    serialize,
    state_of_bytes,
)

log = logging.getLogger(__name__)

TABLE = "hermes_memory_files"
PENDING_TABLE = "hermes_memory_pending"
COMPONENT = "memory"
SETTING = "memory.url"
FALLBACK = (
    "To keep working on this host alone, set memory.store: files (`hermes-memory memory export` "
    "copies the shared memory into the files first)."
)

MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE IF NOT EXISTS {TABLE} (
        owner_key TEXT NOT NULL,
        user_id TEXT NOT NULL,
        target TEXT NOT NULL CHECK (target IN ('memory', 'user')),
        content BYTEA NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (owner_key, target)
    )
    """,
    f"""
    CREATE TABLE IF NOT EXISTS {PENDING_TABLE} (
        owner_key TEXT NOT NULL,
        id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        record TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (owner_key, id)
    )
    """,
)
"""Schema steps, applied once per database in order (see :func:`hermes_core.pg.migrate`)."""


def owner_key(owner: str | None) -> str:
    """The row key of ``owner``: ``""`` for no user, else the file store's directory name."""
    return "" if owner is None else user_key(owner)


def owner_label(owner: str | None) -> str:
    """``owner`` as text PostgreSQL accepts (no NUL, no lone surrogate): a label only."""
    if owner is None:
        return ""
    text = owner.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text.replace("\x00", "\ufffd")


@dataclass(frozen=True)
class PostgresTarget:
    """Where ``memory.store: postgresql`` keeps the files: the URL and how long to wait."""

    url: str
    timeout: float = 10.0

    @property
    def shown(self) -> str:
        """The URL with its password masked."""
        return redact_url(self.url)

    def options(self) -> PoolOptions:
        return PoolOptions(
            timeout=self.timeout,
            statement_timeout=self.timeout,
            max_size=4,
            application_name="hermes-memory",
        )


_MIGRATED: set[tuple[int, str]] = set()


@contextmanager
def connect(target: PostgresTarget) -> Iterator[Any]:
    """A pooled connection with the memory schema in place (migrated once per process).

    A schema the user may not create (no ``CREATE`` on the schema: the default for anyone
    but the owner since PostgreSQL 15) raises :class:`~hermes_core.pg.DatabaseUnavailable`
    naming the grant. Any driver error raised inside the block (a statement timeout, a
    connection lost mid-query) leaves it as :func:`failed`'s ``DatabaseUnavailable``: callers
    only ever see :class:`~hermes_core.errors.HermesError`."""
    psycopg, _ = require_driver()
    with connection(
        target.url, setting=SETTING, options=target.options(), fallback=FALLBACK
    ) as conn:
        key = (os.getpid(), target.url)
        if key not in _MIGRATED:
            try:
                migrate(conn, COMPONENT, MIGRATIONS)
            except psycopg.Error as exc:
                raise schema_failed(target, exc) from exc
            _MIGRATED.add(key)
        try:
            yield conn
        except psycopg.Error as exc:  # a statement timeout, a connection lost mid-query, …
            raise failed(target, exc) from exc


def schema_failed(target: PostgresTarget, exc: BaseException) -> DatabaseUnavailable:
    """The error for memory tables that could not be created or upgraded on ``target``."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return DatabaseUnavailable(
        f"PostgreSQL at {target.shown} could not create the memory tables ({TABLE}, "
        f"{PENDING_TABLE}): {reason}. Let the user of {SETTING} create them (as the "
        "database owner: GRANT CREATE ON SCHEMA public TO <user>), or create them once by "
        f"running any `hermes-memory memory` command as the owner, then retry. {FALLBACK}",
        url=target.shown,
        reason=reason,
    )


@dataclass(frozen=True)
class StoredFile:
    """One row: whose file (``owner`` None = no user), which, its key and exact bytes."""

    owner: str | None
    owner_key: str
    target: MemoryTarget
    content: bytes


def list_files(
    target: PostgresTarget, owners: Sequence[str | None] | None = None
) -> list[StoredFile]:
    """Every stored file, or only those of ``owners`` (``None`` in it = the no-user files),
    ordered by owner key and target. Raises :class:`~hermes_core.pg.DatabaseUnavailable`."""
    sql = f"SELECT owner_key, user_id, target, content FROM {TABLE}"
    params: tuple[Any, ...] = ()
    if owners is not None:
        sql += " WHERE owner_key = ANY(%s)"
        params = ([owner_key(owner) for owner in owners],)
    sql += " ORDER BY owner_key, target"
    psycopg, _ = require_driver()
    with connect(target) as conn:
        try:
            rows = conn.execute(sql, params).fetchall()
        except psycopg.Error as exc:
            raise failed(target, exc) from exc
    return [
        StoredFile(
            owner=str(uid) if key else None,
            owner_key=str(key),
            target=tgt,
            content=bytes(content),
        )
        for key, uid, tgt, content in rows
    ]


def failed(target: PostgresTarget, exc: BaseException) -> DatabaseUnavailable:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return DatabaseUnavailable(
        f"PostgreSQL at {target.shown} refused the memory query ({reason}). Check the server "
        f"and {SETTING}, then retry. {FALLBACK}",
        url=target.shown,
        reason=reason,
    )


def delete_owner(target: PostgresTarget, owner: str | None) -> int:
    """Delete every memory file and staged write of ``owner``; returns the rows removed."""
    psycopg, _ = require_driver()
    with connect(target) as conn:
        try:
            files = conn.execute(f"DELETE FROM {TABLE} WHERE owner_key = %s", (owner_key(owner),))
            staged = conn.execute(
                f"DELETE FROM {PENDING_TABLE} WHERE owner_key = %s", (owner_key(owner),)
            )
        except psycopg.Error as exc:
            raise failed(target, exc) from exc
    return int(files.rowcount) + int(staged.rowcount)


class PostgresMemoryStore(EntryStore):
    """One owner's ``MEMORY.md`` or ``USER.md`` as a row of :data:`TABLE`."""

    kind: ClassVar[str] = "postgresql"

    def __init__(
        self,
        home: Path,
        target: MemoryTarget,
        limit: int,
        owner: str | None = None,
        *,
        server: PostgresTarget,
    ) -> None:
        super().__init__(home, target, limit, owner)
        self.server = server
        self.key = owner_key(self.owner)

    @property
    def location(self) -> str:
        who = "no user" if self.owner is None else f"user {self.owner!r}"
        return f"{self.server.shown} ({TABLE}: {self.filename} of {who})"

    def _lock_key(self) -> int:
        return advisory_key("hermes-memory", self.key, self.target)

    def _select(self, conn: Any) -> bytes | None:
        row = conn.execute(
            f"SELECT content FROM {TABLE} WHERE owner_key = %s AND target = %s",
            (self.key, self.target),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def _upsert(self, conn: Any, data: bytes) -> None:
        conn.execute(
            f"INSERT INTO {TABLE} (owner_key, user_id, target, content) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (owner_key, target) DO UPDATE SET content = EXCLUDED.content, "
            "updated_at = now()",
            (self.key, owner_label(self.owner), self.target, data),
        )

    def read(self) -> DiskState:
        try:
            return state_of_bytes(self.stored_bytes())
        except HermesError as exc:
            return DiskState(error=str(exc))

    def stored_bytes(self) -> bytes | None:
        """The row's exact bytes, ``None`` when there is no row. Raises
        :class:`~hermes_core.pg.DatabaseUnavailable` when the server cannot be used."""
        psycopg, _ = require_driver()
        with connect(self.server) as conn:
            try:
                return self._select(conn)
            except psycopg.Error as exc:
                raise failed(self.server, exc) from exc

    def read_original(self) -> bytes:
        return self.stored_bytes() or b""

    def drift_payload(self) -> dict[str, Any]:
        """The refusal for a row edited by hand out of the round-trip format."""
        return {
            "success": False,
            "error": (
                f"Refusing to write {self.filename}: the stored text has content that wouldn't "
                "round-trip through the memory tool (it was probably edited in the database "
                "by hand). Nothing was changed."
            ),
            "remediation": (
                f"Restore the format (entries separated by a line containing only §, each "
                f"entry shorter than {self.limit:,} chars) with `hermes-memory memory edit "
                f"--target "
                f"{self.target}{user_option(self.owner)}`, or use memory(action='add') to "
                "record new facts, then retry."
            ),
        }

    @contextmanager
    def _locked(self) -> Iterator[tuple[Any, bytes | None]]:
        """A transaction holding this owner's and file's advisory lock, with the row's bytes."""
        with connect(self.server) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(),))
            yield conn, self._select(conn)

    def transact(self, mutate: Callable[[list[str]], Change], *, drift_guard: bool) -> Any:
        psycopg, _ = require_driver()
        committing = False
        try:
            with self._locked() as (conn, data):
                change = self.checked_change(state_of_bytes(data), mutate, drift_guard=drift_guard)
                if change.entries is not None:
                    self._upsert(conn, serialize(change.entries).encode("utf-8"))
                committing = True
            return change.result
        except DatabaseUnavailable as exc:
            raise StoreRefusal(
                self._refusal(str(exc), committing), maybe_written=committing
            ) from exc
        except psycopg.Error as exc:
            why = str(failed(self.server, exc))
            raise StoreRefusal(self._refusal(why, committing), maybe_written=committing) from exc

    def _refusal(self, why: str, committing: bool) -> dict[str, Any]:
        tail = (
            "The connection failed while committing: the write may or may not be saved — "
            f"check with `hermes-memory memory show --target "
            f"{self.target}{user_option(self.owner)}`."
            if committing
            else "Nothing was changed."
        )
        return {"success": False, "error": f"Cannot modify {self.filename}: {why} {tail}"}

    def replace_if_unchanged(
        self, original: bytes, text: str, *, keep_original: bool = False
    ) -> Path | None:
        backup: Path | None = None
        if keep_original:
            self.local_dir.mkdir(parents=True, exist_ok=True)
            backup = self.local_dir / f"{self.filename}.bak.{int(time.time())}"
            atomic_write_bytes(backup, original)
        self.replace_bytes_if_unchanged(original, text.encode("utf-8"))
        return backup

    def replace_bytes_if_unchanged(self, original: bytes, data: bytes) -> None:
        """Under the lock: store ``data`` if the row still holds ``original`` (``b""`` = no
        row or an empty one), else raise :class:`~.store.EditConflict`."""
        with self._locked() as (conn, current):
            if (current or b"") != original:
                raise EditConflict(
                    f"{self.filename} changed in the database while you were editing"
                )
            self._upsert(conn, data)


__all__ = [
    "COMPONENT",
    "MIGRATIONS",
    "PENDING_TABLE",
    "TABLE",
    "PostgresMemoryStore",
    "PostgresTarget",
    "StoredFile",
    "connect",
    "delete_owner",
    "failed",
    "list_files",
    "owner_key",
    "owner_label",
    "schema_failed",
]
