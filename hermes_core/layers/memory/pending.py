"""Staged memory writes on disk: one JSON record per write, per user scope.

A staged write is a JSON file ``$HERMES_HOME/pending/memory/<id>.json`` (0600, written
atomically) — for a user id, ``pending/memory/users/<key>/<id>.json`` (see
:mod:`hermes_core.scope`). A record names its user; a :class:`PendingStore` lists, claims and
discards only its own user's records. A record holds the validated, scanned operations, who
asked (``origin``), and for each replace/remove the *full* entry it targets. Nothing here
raises for a missing or corrupt record: callers get ``None``. Approving or rejecting a record
is :mod:`.approval`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from hermes_core.fsutil import atomic_write_text, file_lock, read_regular_text
from hermes_core.scope import (
    ensure_scope_dir,
    known_user_ids,
    normalize_user_id,
    scope_dir,
)
from hermes_core.types import MemoryTarget, WriteOrigin

from .ops import Operation

log = logging.getLogger(__name__)

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def pending_dir(home: Path) -> Path:
    """``$HERMES_HOME/pending/memory``: the no-user scope's records (users' below it)."""
    return home / "pending" / "memory"


def pending_user_ids(home: Path) -> list[str]:
    """The user ids that have a staged-write directory in ``home``."""
    return known_user_ids(pending_dir(home))


@dataclass(frozen=True)
class PendingWrite:
    """One staged write. ``expected`` maps 1-based op index → the full entry it targets."""

    id: str
    target: MemoryTarget
    operations: list[dict[str, str]]
    batch: bool
    origin: WriteOrigin = "foreground"
    session_id: str = ""
    created_at: float = field(default_factory=time.time)
    expected: dict[str, str] = field(default_factory=dict)
    proposal: bool = False
    user_id: str | None = None

    @property
    def auto(self) -> bool:
        """True when no person asked for it (unattended background review)."""
        return self.origin == "background_review"

    def ops(self) -> list[Operation]:
        return [
            Operation(
                action=cast(Any, op["action"]),
                content=op.get("content"),
                old_text=op.get("old_text"),
                priority=op.get("priority", "normal"),
            )
            for op in self.operations
        ]

    def summary(self) -> str:
        """One line per operation, e.g. ``replace 'dark mode' → 'User prefers light mode'``."""
        parts = []
        for op in self.operations:
            if op["action"] == "add":
                parts.append(f"add {op.get('content', '')!r}")
            elif op["action"] == "replace":
                parts.append(f"replace {op.get('old_text', '')!r} → {op.get('content', '')!r}")
            else:
                parts.append(f"remove {op.get('old_text', '')!r}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_record(text: str) -> PendingWrite:
    """A :class:`PendingWrite` from its JSON text (ValueError/KeyError/TypeError if malformed)."""
    data = json.loads(text)
    return PendingWrite(
        id=str(data["id"]),
        target=data["target"],
        operations=[dict(op) for op in data["operations"]],
        batch=bool(data["batch"]),
        origin=data.get("origin", "foreground"),
        session_id=str(data.get("session_id", "")),
        created_at=float(data.get("created_at", 0.0)),
        expected={str(k): str(v) for k, v in (data.get("expected") or {}).items()},
        proposal=bool(data.get("proposal", False)),
        user_id=normalize_user_id(data.get("user_id")),
    )


class PendingStore:
    """The staged writes of one user (``None``: the no-user scope) in one home, as files.

    With ``memory.store: postgresql`` the records live in the database instead
    (:class:`~.pgpending.PostgresPendingStore`, same interface), so every host sees and can
    approve them; :func:`~.backends.open_pending` picks the one ``memory.store`` names."""

    def __init__(self, home: Path, user_id: str | None = None) -> None:
        self.home = home
        self.user_id = normalize_user_id(user_id)

    @property
    def directory(self) -> Path:
        return scope_dir(pending_dir(self.home), self.user_id)

    def path(self, pending_id: str) -> Path:
        return self.directory / f"{pending_id}.json"

    @staticmethod
    def valid_id(pending_id: str) -> bool:
        """Ids are short hex strings; anything else (``../x``, ``.``) names no record, so a
        typed id can never reach a file outside the pending directory."""
        return bool(_ID.fullmatch(pending_id or ""))

    def stage(
        self,
        target: MemoryTarget,
        ops: list[Operation],
        *,
        batch: bool,
        origin: WriteOrigin,
        session_id: str,
        expected: dict[int, str],
        proposal: bool,
    ) -> PendingWrite:
        """Persist a staged write and return it."""
        record = PendingWrite(
            id=self.new_id(),
            target=target,
            operations=[op.to_dict() for op in ops],
            batch=batch,
            origin=origin,
            session_id=session_id,
            expected={str(k): v for k, v in expected.items()},
            proposal=proposal,
            user_id=self.user_id,
        )
        self.save(record)
        return record

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex[:10]

    def save(self, record: PendingWrite) -> None:
        """Persist ``record`` (a new one: ids are random)."""
        ensure_scope_dir(pending_dir(self.home), self.user_id)
        atomic_write_text(self.path(record.id), json.dumps(record.to_dict(), ensure_ascii=False))

    def get(self, pending_id: str) -> PendingWrite | None:
        """The record, or ``None`` when missing, unreadable or malformed (logged)."""
        if not self.valid_id(pending_id):
            return None
        path = self.path(pending_id)
        try:
            record = parse_record(read_regular_text(path, max_bytes=1 << 20, what="pending write"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring malformed pending memory write %s: %s", path, exc)
            return None
        if record.user_id != self.user_id:  # a file moved between scopes: never another's
            log.warning("ignoring pending memory write %s: it belongs to another user", path)
            return None
        return record

    def list(self) -> list[PendingWrite]:
        """Every readable record, oldest first."""
        if not self.directory.is_dir():
            return []
        records = [self.get(p.stem) for p in sorted(self.directory.glob("*.json"))]
        return sorted((r for r in records if r is not None), key=lambda r: r.created_at)

    @contextlib.contextmanager
    def claim(self, pending_id: str) -> Iterator[bool]:
        """Hold record ``pending_id``'s lock for the ``with`` block (one approval at a time,
        across processes); yields whether the record still exists."""
        with file_lock(self.path(pending_id)):
            yield self.path(pending_id).exists()

    def discard(self, pending_id: str) -> bool:
        """Delete a record; False when there was none (or the id is not a valid id)."""
        if not self.valid_id(pending_id):
            return False
        try:
            self.path(pending_id).unlink()
        except FileNotFoundError:
            return False
        with contextlib.suppress(OSError):
            self.path(pending_id).with_name(f"{pending_id}.json.lock").unlink()
        return True


__all__ = [
    "PendingStore",
    "PendingWrite",
    "parse_record",
    "pending_dir",
    "pending_user_ids",
]
