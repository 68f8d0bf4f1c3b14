"""Approving and rejecting staged memory writes (``memory.write_approval``) and
background-review proposals; the records themselves are :mod:`.pending`.

Approval replays a record's operations through the same engine as the tool, bypassing the
gate, and refuses (keeping the record) when a targeted entry changed since staging, when the
record belongs to another user, or when a content no longer passes the strict scan or has a
``§`` separator line (a record edited on disk, or staged before a scanner update). Rejection
deletes the record. Nothing here raises for a missing or corrupt record: callers get an error
payload.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hermes_core.errors import HermesError
from hermes_core.scope import user_option
from hermes_core.security.scan import find_threats
from hermes_core.types import MemoryWrite

from .engine import MemoryEngine, Outcome, StaleWrite
from .pending import (
    PendingStore,
    PendingWrite,
    parse_record,
    pending_dir,
    pending_user_ids,
)
from .store import has_separator_line

log = logging.getLogger(__name__)


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
