"""Staged memory writes (``memory.write_approval``) and background-review proposals.

A staged write is a JSON file ``$HERMES_HOME/pending/memory/<id>.json`` (0600, written
atomically) — for a user id, ``pending/memory/users/<key>/<id>.json`` (see
:mod:`hermes_core.scope`). A record names its user; a :class:`PendingStore` lists, approves
and rejects only its own user's records, and approval writes that user's files.

A record holds the validated, scanned operations, who asked (``origin``), and for
each replace/remove the *full* entry it targets. Approval replays the operations through the
same engine as the tool, bypassing the gate, and refuses (keeping the record) when a
targeted entry changed since staging, or when a content no longer passes the strict scan or
has a ``§`` separator line (a record edited on disk, or staged before a scanner update).
Rejection deletes the record. Nothing here raises for a missing or corrupt record: callers
get ``None`` / an error payload.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from hermes_core.errors import HermesError
from hermes_core.fsutil import atomic_write_text, file_lock
from hermes_core.scope import (
    ensure_scope_dir,
    known_user_ids,
    normalize_user_id,
    scope_dir,
    user_option,
)
from hermes_core.security.scan import find_threats
from hermes_core.types import MemoryTarget, MemoryWrite, WriteOrigin

from .engine import MemoryEngine, Outcome, StaleWrite
from .ops import Operation
from .store import has_separator_line

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
            record = parse_record(path.read_text(encoding="utf-8"))
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


def approve(engine: MemoryEngine, pending: PendingStore, pending_id: str) -> Outcome:
    """Replay a staged write (the gate is bypassed). Stale or refused writes keep the record;
    a store that cannot be reached (PostgreSQL down) is a refusal too, never an exception."""
    try:
        return _approve(engine, pending, pending_id)
    except HermesError as exc:
        return Outcome(
            {
                "success": False,
                "error": f"Pending write '{pending_id}' was not applied: {exc} The record is "
                "kept — approve it again once that is fixed.",
            }
        )


def _approve(engine: MemoryEngine, pending: PendingStore, pending_id: str) -> Outcome:
    record = pending.get(pending_id)
    if record is None:
        return Outcome(
            {
                "success": False,
                "error": f"No pending memory write with id '{pending_id}'. "
                f"List them with `hermes-memory memory pending{user_option(pending.user_id)}`.",
            }
        )
    if record.user_id != engine.user_id:  # never replay one user's write into another's files
        return Outcome(
            {
                "success": False,
                "error": f"Pending write '{pending_id}' belongs to another user; nothing was "
                "applied.",
            }
        )
    with pending.claim(record.id) as present:
        if not present:  # approved or rejected concurrently
            return Outcome({"success": False, "error": f"Pending write '{pending_id}' is gone."})
        for index, op in enumerate(record.ops(), start=1):
            if op.action == "remove" or not op.content:
                continue
            ids = find_threats(op.content, "strict")
            if ids or has_separator_line(op.content):
                why = (
                    f"matches blocked pattern(s) {', '.join(ids)}"
                    if ids
                    else "has a line containing only '§' (the entry separator)"
                )
                return Outcome(
                    {
                        "success": False,
                        "error": f"Pending write '{record.id}' cannot be applied: operation "
                        f"{index} {why}. Nothing was applied. Discard it with `hermes-memory "
                        f"memory "
                        f"reject {record.id}{user_option(record.user_id)}`.",
                    }
                )
        expected = {int(k): v for k, v in record.expected.items()}
        try:
            if record.batch:
                outcome = engine.run_batch(
                    record.target,
                    record.ops(),
                    origin=record.origin,
                    session_id=record.session_id,
                    expected=expected,
                )
            else:
                outcome = engine.run_single(
                    record.target,
                    record.ops()[0],
                    origin=record.origin,
                    session_id=record.session_id,
                    expected=expected.get(1),
                )
        except (OSError, RuntimeError) as exc:  # lock refused, disk full, write failed
            return Outcome(
                {
                    "success": False,
                    "error": f"Pending write '{record.id}' was not applied: {exc}. Nothing was "
                    "changed and the record is kept — fix that, then approve it again.",
                }
            )
        except StaleWrite:
            return Outcome(
                {
                    "success": False,
                    "error": (
                        f"Pending write '{record.id}' is stale: the entry it targets changed "
                        "since it was staged. Nothing was applied. Reject it with `hermes "
                        f"memory reject {record.id}{user_option(record.user_id)}` and make the "
                        "change again."
                    ),
                    "stale": True,
                }
            )
        if outcome.success:
            pending.discard(record.id)
            outcome.payload["pending_id"] = record.id
        return outcome


def reject(pending: PendingStore, pending_id: str) -> bool:
    """Drop a staged write; False when there was none."""
    return pending.discard(pending_id)


@dataclass(frozen=True)
class Approval:
    """What approving one staged write did (``outcome.writes`` = what was committed)."""

    pending_id: str
    outcome: Outcome

    @property
    def success(self) -> bool:
        return self.outcome.success


def select_pending(pending: PendingStore, ids: Sequence[str]) -> list[str]:
    """``ids`` as given, or every record of ``pending`` (oldest first) for ``["all"]``."""
    if list(ids) == ["all"]:
        return [record.id for record in pending.list()]
    return list(ids)


def approve_pending(
    engine: MemoryEngine,
    pending: PendingStore,
    ids: Sequence[str],
    *,
    notify: Callable[[MemoryWrite], None] | None = None,
) -> list[Approval]:
    """Approve staged writes ``ids`` (``["all"]`` = every record): the one approval loop of
    ``hermes-memory memory approve`` and ``/memory approve`` alike.

    ``engine`` and ``pending`` must be of the same user (else ValueError): a user approves
    only their own staged writes, into their own files. Each record is replayed by
    :func:`approve` (stale or refused ones are kept and reported);
    every committed write is passed to ``notify`` once, in order — the caller's route to the
    provider's ``on_memory_write`` (:meth:`hermes_core.host.MemoryHost.notify_memory_write`),
    so a mirror misses no approved write. A raising ``notify`` is logged; the write stays
    committed. Returns one :class:`Approval` per selected id (empty when nothing is pending).
    """
    if engine.user_id != pending.user_id:
        raise ValueError(
            f"approve_pending needs the engine and the pending store of one user (engine: "
            f"{engine.user_id!r}, pending: {pending.user_id!r})"
        )
    results: list[Approval] = []
    for pending_id in select_pending(pending, ids):
        outcome = approve(engine, pending, pending_id)
        for write in outcome.writes:
            if notify is None:
                break
            try:
                notify(write)
            except Exception as exc:  # committed already; a mirror failure is not ours
                log.warning("provider was not told about approved write %s: %s", pending_id, exc)
        results.append(Approval(pending_id, outcome))
    return results


def reject_pending(pending: PendingStore, ids: Sequence[str]) -> list[tuple[str, bool]]:
    """Discard staged writes ``ids`` (``["all"]`` = every record): ``(id, existed)`` each."""
    return [
        (pending_id, reject(pending, pending_id)) for pending_id in select_pending(pending, ids)
    ]


__all__ = [
    "Approval",
    "PendingStore",
    "PendingWrite",
    "approve",
    "approve_pending",
    "parse_record",
    "pending_dir",
    "pending_user_ids",
    "reject",
    "reject_pending",
    "select_pending",
]
