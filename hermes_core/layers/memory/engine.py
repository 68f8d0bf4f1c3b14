"""Committed memory writes: budget checks, overflow archive, responses, notifications.

The engine works on an :class:`~.store.EntryStore` from :func:`~.backends.open_store`
(``memory.store``: files or PostgreSQL); what a write does is the same for both.

Shared by the ``memory`` tool, approval replay and the CLI so every surface agrees on what a
write does. Inputs are already validated and scanned (see :mod:`.tool`). Every method returns
an :class:`Outcome`; none raises for a refused write.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from hermes_core.errors import HermesError
from hermes_core.scope import user_option
from hermes_core.security.scan import find_threats
from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget, MemoryWrite, WriteOrigin

from .archive import MemoryArchive, choose_evictions
from .backends import open_store
from .ops import Applied, Operation, OpError, apply_operations, locate
from .scope import MemoryScope
from .snapshot import sanitize_entries, sanitize_entry
from .store import (
    DEFAULT_LIMITS,
    FILENAMES,
    Change,
    EntryStore,
    StoreRefusal,
    char_count,
    coerce_limit,
    percent,
    usage_long,
    usage_short,
)

log = logging.getLogger(__name__)

DONE_NOTE = "Write saved. This update is complete — do not repeat it."
BATCH_SUFFIX = " No operations were applied (batch is all-or-nothing)."
LABELS: dict[MemoryTarget, str] = {"memory": "Memory", "user": "User profile"}

SOFT_WARNING = 0.9
"""Fraction of the budget from which successful writes carry a consolidation ``warning``."""

FailureKind = Literal["budget", "no_match", "batch"]
RestoreRefusal = Literal["missing", "restored", "blocked"]


@dataclass
class Outcome:
    """A tool payload, the committed writes to mirror, and the failure kind (if counted)."""

    payload: dict[str, Any]
    writes: list[MemoryWrite] = field(default_factory=list)
    failure: FailureKind | None = None
    refusal: RestoreRefusal | None = None
    """Why :meth:`MemoryEngine.restore_archived` refused before trying (never in the
    payload): the caller picks its hint from it (:func:`restore_hint`), not from the text."""

    @property
    def success(self) -> bool:
        return self.payload.get("success") is True


def restore_hint(outcome: Outcome, user_id: str | None) -> str:
    """What to do after a failed :meth:`MemoryEngine.restore_archived` (a CLI command or
    "nothing to do"), chosen by :attr:`Outcome.refusal`."""
    if outcome.refusal == "missing":
        return f"list them with `hermes-memory memory archive{user_option(user_id)}`"
    if outcome.refusal in ("restored", "blocked"):
        return "nothing to do"
    return f"free room with `hermes-memory memory edit{user_option(user_id)}` and retry"


def limit_for(settings: MemorySettings, target: MemoryTarget) -> int:
    """The char limit of ``target`` (string values coerced)."""
    raw: Any = settings.memory_char_limit if target == "memory" else settings.user_char_limit
    return coerce_limit(raw, DEFAULT_LIMITS[target])


class StaleWrite(Exception):
    """An approved write no longer applies: the entry it targets changed."""


ECHO_MIN_CHARS = 4000


def cap_echo(entries: Sequence[str], limit: int) -> tuple[list[str], int]:
    """(entries to echo, how many were left out): whole entries, oldest first, while they fit
    in ``max(2 × limit, 4000)`` chars; an entry longer than that alone is cut with ``…``."""
    cap = max(2 * limit, ECHO_MIN_CHARS)
    shown: list[str] = []
    used = 0
    for entry in entries:
        if used + len(entry) > cap:
            if not shown:
                shown.append(entry[: cap - 1] + "…")
            break
        shown.append(entry)
        used += len(entry)
    return shown, len(entries) - len(shown)


class MemoryEngine:
    """Applies operations to the MEMORY.md / USER.md of one user (``user_id``; ``None`` = the
    no-user files) under ``home`` with ``settings``. Which file that is, and which archive rows
    it sees, is :class:`MemoryScope`'s decision."""

    def __init__(self, home: Path, settings: MemorySettings, user_id: str | None = None) -> None:
        self.home = home
        self.settings = settings
        self.scope = MemoryScope.of(settings, user_id)
        self.archive = MemoryArchive(home, self.scope)

    @property
    def user_id(self) -> str | None:
        return self.scope.user_id

    def store(self, target: MemoryTarget) -> EntryStore:
        """``target``'s store of this scope (files or PostgreSQL, per ``memory.store``)."""
        return open_store(
            self.home,
            self.settings,
            target,
            limit_for(self.settings, target),
            self.scope.owner(target),
        )

    # -- responses

    def error_with_entries(
        self, target: MemoryTarget, message: str, entries: Sequence[str]
    ) -> dict[str, Any]:
        """An actionable error echoing the (sanitised) entries and usage.

        The echo is capped like the snapshot (``max(2 × limit, 4000)`` chars of entries): a
        file grown far over budget by hand must not put megabytes into one tool result. When
        entries are left out, ``entries_not_shown`` counts them."""
        limit = limit_for(self.settings, target)
        shown, hidden = cap_echo(sanitize_entries(entries, target), limit)
        payload: dict[str, Any] = {
            "success": False,
            "error": message,
            "current_entries": shown,
            "usage": usage_short(char_count(entries), limit),
        }
        if hidden:
            payload["entries_not_shown"] = hidden
        return payload

    def success(
        self, target: MemoryTarget, entries: Sequence[str], message: str, **extra: Any
    ) -> dict[str, Any]:
        limit = limit_for(self.settings, target)
        payload: dict[str, Any] = {
            "success": True,
            "done": True,
            "target": target,
            "usage": usage_long(char_count(entries), limit),
            "entry_count": len(entries),
            "message": message,
            "note": DONE_NOTE,
        }
        payload.update(extra)
        current = char_count(entries)
        if limit > 0 and current >= SOFT_WARNING * limit:
            payload["warning"] = (
                f"{LABELS[target]} is {percent(current, limit)}% full. When convenient (not "
                "now, if this turn's task is unrelated), merge related entries with replace and "
                "remove stale ones so new facts fit."
            )
        return payload

    # -- single operations

    def run_single(
        self,
        target: MemoryTarget,
        op: Operation,
        *,
        origin: WriteOrigin = "foreground",
        session_id: str = "",
        expected: str | None = None,
    ) -> Outcome:
        """Apply one operation (``expected``: the full entry a replayed replace/remove must
        still target)."""
        store = self.store(target)
        archived: list[int] = []

        def mutate(entries: list[str]) -> Change:
            return self._single(store, entries, op, expected, archived, session_id)

        outcome = self._transact(store, mutate, drift_guard=op.action != "add", archived=archived)
        if outcome.success and not outcome.payload.get("duplicate"):
            outcome.writes = [_write_for(op, outcome.payload, target, origin, session_id)]
        outcome.payload.pop("duplicate", None)
        if outcome.writes and op.action == "add":
            self._mark_priority(target, op)
        return outcome

    def _single(
        self,
        store: EntryStore,
        entries: list[str],
        op: Operation,
        expected: str | None,
        archived: list[int],
        session_id: str,
    ) -> Change:
        """Dispatch one operation on the entries read under the lock."""
        if op.action == "add":
            return self._add(store, entries, op.content or "", archived, session_id)
        position = self._locate(store.target, entries, op.old_text or "")
        if isinstance(position, Change):
            return position
        if expected is not None and entries[position] != expected:
            raise StaleWrite(entries[position])
        if op.action == "remove":
            return self._remove(store.target, entries, position)
        return self._replace(store, entries, position, op.content or "")

    def _add(
        self,
        store: EntryStore,
        entries: list[str],
        content: str,
        archived: list[int],
        session_id: str,
    ) -> Change:
        """Append ``content`` (a duplicate is a no-op success); over budget, make room in the
        archive (``overflow: archive``) or refuse with the entries echoed."""
        target, limit = store.target, store.limit
        if content in entries:
            message = "Entry already exists (no duplicate added)."
            return Change(None, Outcome(self.success(target, entries, message, duplicate=True)))
        new = [*entries, content]
        extra: dict[str, Any] = {}
        if limit >= 0 and char_count(new) > limit:
            evicted = self._make_room(store, entries, [content], archived, session_id)
            if evicted is None:
                current = char_count(entries)
                payload = self.error_with_entries(
                    target,
                    f"{LABELS[target]} at {current:,}/{limit:,} chars. Adding this entry "
                    f"({len(content):,} chars) would exceed the limit. Use "
                    "memory(action='replace') to merge related entries and "
                    "memory(action='remove') to drop stale ones — ideally in ONE call with "
                    "`operations` — then retry the add, all in this turn.",
                    entries,
                )
                return Change(None, Outcome(payload, failure="budget"))
            new = [e for e in entries if e not in evicted] + [content]
            extra = self._archived_extra(evicted, archived)
        message = "Entry added."
        if extra:
            message += f" {extra['archive_note']}"
        return Change(new, Outcome(self.success(target, new, message, **extra)))

    def _locate(self, target: MemoryTarget, entries: list[str], old_text: str) -> int | Change:
        """The index of the one entry ``old_text`` names, or the refusal (no match echoes the
        entries; an ambiguous match lists the candidates)."""
        try:
            return locate(entries, old_text, render=lambda e: sanitize_entry(e, FILENAMES[target]))
        except OpError as exc:
            if exc.kind == "no_match":
                payload = self.error_with_entries(
                    target,
                    f"{exc.message} Check current_entries below and retry with the exact text "
                    "of (or a short unique substring from) the entry to change.",
                    entries,
                )
                return Change(None, Outcome(payload, failure="no_match"))
            payload = {"success": False, "error": exc.message}
            if exc.matches:
                payload["matches"] = exc.matches
            return Change(None, Outcome(payload))

    def _remove(self, target: MemoryTarget, entries: list[str], position: int) -> Change:
        """Drop the entry at ``position``."""
        removed = entries[position]
        new = entries[:position] + entries[position + 1 :]
        return Change(
            new, Outcome(self.success(target, new, "Entry removed.", removed_entry=removed))
        )

    def _replace(
        self, store: EntryStore, entries: list[str], position: int, content: str
    ) -> Change:
        """Rewrite the entry at ``position`` as ``content`` (merging into an identical entry
        elsewhere); refused when the result is over budget."""
        target, limit = store.target, store.limit
        current_entry = entries[position]
        new = list(entries)
        if content in new and content != current_entry:
            del new[position]
        else:
            new[position] = content
        if limit >= 0 and char_count(new) > limit:
            total = char_count(new)
            payload = self.error_with_entries(
                target,
                f"Replacement would put {LABELS[target].lower()} at {total:,}/{limit:,} chars "
                "(over the limit). Shorten the new content, or remove stale entries in the "
                "same call with `operations`, then retry.",
                entries,
            )
            return Change(None, Outcome(payload, failure="budget"))
        payload = self.success(target, new, "Entry replaced.", replaced_entry=current_entry)
        return Change(new, Outcome(payload))

    # -- batches

    def run_batch(
        self,
        target: MemoryTarget,
        ops: Sequence[Operation],
        *,
        origin: WriteOrigin = "foreground",
        session_id: str = "",
        expected: Mapping[int, str] | None = None,
    ) -> Outcome:
        """Apply ``ops`` all-or-nothing; the budget is checked on the final state only."""
        store = self.store(target)
        archived: list[int] = []
        applied_box: list[Applied] = []

        def mutate(entries: list[str]) -> Change:
            return self._batch(store, entries, ops, expected or {}, archived, applied_box)

        outcome = self._transact(store, mutate, drift_guard=True, archived=archived)
        if outcome.success and applied_box:
            applied = applied_box[0]
            skipped = set(applied.skipped)
            for index, op in enumerate(ops, start=1):
                if index in skipped:
                    continue
                previous = applied.replaced.get(index) or applied.removed.get(index)
                outcome.writes.append(
                    MemoryWrite(
                        action=op.action,
                        target=target,
                        content="" if op.action == "remove" else (op.content or ""),
                        previous_content=previous,
                        old_text=op.old_text,
                        origin=origin,
                        session_id=session_id,
                    )
                )
                if op.action == "add":
                    self._mark_priority(target, op)
        return outcome

    def _batch(
        self,
        store: EntryStore,
        entries: list[str],
        ops: Sequence[Operation],
        expected: Mapping[int, str],
        archived: list[int],
        applied_box: list[Applied],
    ) -> Change:
        target = store.target
        limit = store.limit
        usage = usage_short(char_count(entries), limit)
        try:
            applied = apply_operations(entries, ops)
        except OpError as exc:
            message = f"Operation {exc.op_index} ({exc.op_action}): {exc.message}{BATCH_SUFFIX}"
            return Change(
                None, Outcome({"success": False, "error": message, "usage": usage}, failure="batch")
            )
        for index, want in expected.items():
            got = applied.replaced.get(index) or applied.removed.get(index)
            if got != want:
                raise StaleWrite(got or "")
        new = applied.entries
        if entries and not new:
            message = (
                f"Refusing to empty {FILENAMES[target]}: these operations would remove every "
                "entry. Keep at least one entry, or remove the last one with a single "
                f"memory(action='remove') call if that is really intended.{BATCH_SUFFIX}"
            )
            return Change(
                None, Outcome({"success": False, "error": message, "usage": usage}, failure="batch")
            )
        extra: dict[str, Any] = {}
        if limit >= 0 and char_count(new) > limit:
            written = {ops[i - 1].content or "" for i in applied.added}
            written |= {ops[i - 1].content or "" for i in applied.replaced}
            evicted = None
            if applied.added:
                base = [e for e in new if e not in written]
                evicted = self._make_room(
                    store, base, [e for e in new if e in written], archived, ""
                )
            if evicted is None:
                total = char_count(new)
                message = (
                    f"Batch would put {LABELS[target].lower()} at {total:,}/{limit:,} chars "
                    f"(over the limit).{BATCH_SUFFIX} Remove or shorten more entries in the "
                    "same batch."
                )
                return Change(
                    None,
                    Outcome({"success": False, "error": message, "usage": usage}, failure="batch"),
                )
            gone = set(evicted)
            new = [e for e in new if e not in gone]
            extra = self._archived_extra(evicted, archived)
        applied.entries = new
        applied_box.append(applied)
        message = f"Applied {len(ops)} operation(s)."
        if extra:
            message += f" {extra['archive_note']}"
        if applied.replaced:
            extra["replaced_entries"] = {str(k): v for k, v in applied.replaced.items()}
        if applied.removed:
            extra["removed_entries"] = {str(k): v for k, v in applied.removed.items()}
        return Change(new, Outcome(self.success(target, new, message, **extra)))

    # -- overflow archive

    def restore_archived(self, entry_id: int) -> Outcome:
        """Put archived entry ``entry_id`` back into its file and mark it restored.

        Never archives anything else to make room: the entry must fit the budget (and scan
        clean) or the restore is refused with the reason.
        """
        row = self.archive.get(entry_id)
        if row is None:
            return Outcome(
                {"success": False, "error": f"No archived entry with id {entry_id}."},
                refusal="missing",
            )
        if row.restored_at is not None:
            return Outcome(
                {"success": False, "error": f"Archived entry {entry_id} was already restored."},
                refusal="restored",
            )
        ids = find_threats(row.content, "strict")
        if ids:
            return Outcome(
                {
                    "success": False,
                    "error": f"Archived entry {entry_id} matches blocked pattern(s) "
                    f"{', '.join(ids)}; it cannot go back into the system prompt.",
                },
                refusal="blocked",
            )
        strict = MemoryEngine(
            self.home, self.settings.model_copy(update={"overflow": "error"}), self.user_id
        )
        target = cast(MemoryTarget, row.target)
        outcome = strict.run_single(target, Operation(action="add", content=row.content))
        if outcome.success:
            self.archive.mark_restored(entry_id)
            outcome.payload["restored_id"] = entry_id
        return outcome

    def _make_room(
        self,
        store: EntryStore,
        entries: list[str],
        incoming: list[str],
        archived: list[int],
        session_id: str,
    ) -> list[str] | None:
        """Archive entries so ``entries + incoming`` fits (``overflow: archive`` only)."""
        if self.settings.overflow != "archive":
            return None
        limit = store.limit
        low = self.archive.low_priority(store.target)
        evicted = choose_evictions(
            entries,
            fits=lambda remaining: char_count([*remaining, *incoming]) <= limit,
            protected=set(incoming),
            low_priority=low,
        )
        if not evicted:
            return None if evicted is None else []
        priorities = ["low" if e in low else "normal" for e in evicted]
        archived.extend(
            self.archive.add(
                store.target,
                evicted,
                reason="overflow",
                priorities=priorities,
                session_id=session_id or None,
            )
        )
        return evicted

    def _archived_extra(self, evicted: list[str], archived: list[int]) -> dict[str, Any]:
        if not evicted:
            return {}
        count = len(evicted)
        ids = archived[-count:]
        noun = "entry" if count == 1 else "entries"
        return {
            "archived": [{"id": i, "content": c} for i, c in zip(ids, evicted, strict=True)],
            "archive_note": (
                f"Archived {count} older {noun} to make room (ids {', '.join(map(str, ids))}; "
                "searchable with memory_archive, restorable with `hermes-memory memory restore "
                "ID`)."
            ),
        }

    def _mark_priority(self, target: MemoryTarget, op: Operation) -> None:
        if op.priority == "low" and op.content:
            try:
                self.archive.set_priority(target, op.content, "low")
            except Exception as exc:  # a lost mark must not fail a committed write
                log.warning("could not record low priority for a memory entry: %s", exc)

    # -- plumbing

    def _transact(
        self, store: EntryStore, mutate: Any, *, drift_guard: bool, archived: list[int]
    ) -> Outcome:
        try:
            result = store.transact(mutate, drift_guard=drift_guard)
        except StoreRefusal as refusal:  # nothing was written: entries archived for it go back
            if archived and not refusal.maybe_written:
                self.archive.delete(archived)
            return Outcome(dict(refusal.payload))
        except BaseException:
            if archived:
                self.archive.delete(archived)
            raise
        assert isinstance(result, Outcome)
        return result


def _write_for(
    op: Operation,
    payload: Mapping[str, Any],
    target: MemoryTarget,
    origin: WriteOrigin,
    session_id: str,
) -> MemoryWrite:
    previous = payload.get("replaced_entry") or payload.get("removed_entry")
    return MemoryWrite(
        action=op.action,
        target=target,
        content="" if op.action == "remove" else (op.content or ""),
        previous_content=previous if isinstance(previous, str) else None,
        old_text=op.old_text,
        origin=origin,
        session_id=session_id,
    )


class RestoreFailed(HermesError):
    """An archived entry could not be restored; the message says why and what to do."""


def restore_entry(
    home: Path, settings: MemorySettings, user_id: str | None, entry_id: int
) -> tuple[MemoryEngine, Outcome]:
    """Restore ``user_id``'s archived entry ``entry_id`` (:meth:`MemoryEngine.restore_archived`)
    and return the engine and the successful outcome (its ``writes`` are for the provider
    mirror). Raises :class:`RestoreFailed` naming the next step: a refusal (missing, already
    restored, blocked, no room) with :func:`restore_hint`, or a storage failure (nothing
    changed, the entry stays in the archive)."""
    engine = MemoryEngine(home, settings, user_id)
    try:
        outcome = engine.restore_archived(entry_id)
    except (OSError, RuntimeError, sqlite3.Error) as exc:
        raise RestoreFailed(
            f"could not restore entry {entry_id}: {exc} — nothing was changed and the entry "
            "stays in the archive; fix that and retry"
        ) from exc
    if not outcome.success:
        error = str(outcome.payload.get("error", "failed"))
        hint = restore_hint(outcome, user_id)
        raise RestoreFailed(f"could not restore entry {entry_id}: {error} — {hint}")
    return engine, outcome


__all__ = [
    "BATCH_SUFFIX",
    "DONE_NOTE",
    "MemoryEngine",
    "Outcome",
    "RestoreFailed",
    "StaleWrite",
    "limit_for",
    "restore_entry",
    "restore_hint",
]
