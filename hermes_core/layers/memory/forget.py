"""Forget a subject in one user's built-in memory: every place a phrase can hide.

For "forget a subject" (``hermes-memory memory forget``, ``hermes-memory ui``):
:func:`find_phrase` lists
every match of a phrase (case-insensitive, Chinese too) in the user's view of the memory
layer — live MEMORY.md / USER.md entries (files or PostgreSQL), the overflow archive and its
priority marks, staged writes waiting for approval, and the copies the files store keeps
beside a file (drift backups ``*.bak.*``, refused-edit ``recovery/`` files). :func:`forget_phrase`
removes them: entries and archive rows are deleted, staged writes discarded, copies
containing the phrase deleted (they are copies; the live file stays the source of truth).
:func:`forget_scope` removes everything of one user. Which user sees which file is
:class:`~.scope.MemoryScope`'s decision (with ``memory.shared_agent_memory`` the shared
MEMORY.md is the user's view too).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget

from .archive import MemoryArchive
from .backends import open_pending, open_store
from .engine import limit_for
from .scope import MemoryScope
from .store import FILENAMES, Change, EntryStore

TARGETS: tuple[MemoryTarget, ...] = ("memory", "user")
MAX_SIDE_FILE_BYTES = 16 * 1024 * 1024
"""Side files larger than this are not read (they are not ours); they are reported."""


@dataclass(frozen=True)
class MemoryHit:
    """One match: ``store`` (``MEMORY.md``, ``USER.md``, ``archive``, ``priority``,
    ``pending``, ``copy``), ``ref`` (an entry number, row id, record id or path) and the
    matching text."""

    store: str
    ref: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"store": self.store, "ref": self.ref, "text": self.text}


def _stores(home: Path, settings: MemorySettings, scope: MemoryScope) -> list[EntryStore]:
    return [open_store(home, settings, t, limit_for(settings, t), scope.owner(t)) for t in TARGETS]


def _side_files(home: Path, scope: MemoryScope) -> list[Path]:
    """Regular files in the user's local memory directories other than the live files,
    the ``USER_ID`` label and locks (backups, recovery copies, temp files)."""
    found: list[Path] = []
    seen: set[Path] = set()
    for target in TARGETS:
        directory = scope.directory(home, target)
        if directory in seen or not directory.is_dir():
            continue
        seen.add(directory)
        for path in [directory / name for name in sorted(p.name for p in directory.iterdir())]:
            candidates = sorted(path.iterdir()) if path.name == "recovery" else [path]
            for item in candidates:
                if item.is_symlink() or not item.is_file():
                    continue
                if item.name in (*FILENAMES.values(), "USER_ID") or item.suffix == ".lock":
                    continue
                found.append(item)
    return found


def _mentions_bytes(path: Path, needle: str) -> bool:
    try:
        if path.stat().st_size > MAX_SIDE_FILE_BYTES:
            return False
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return False
    return needle in text.casefold()


def find_phrase(
    home: Path, settings: MemorySettings, user_id: str | None, phrase: str
) -> list[MemoryHit]:
    """Every match of ``phrase`` in ``user_id``'s view of the memory layer (see the module
    docstring). Raises :class:`~hermes_core.errors.HermesError` (e.g. the PostgreSQL store
    is unreachable) rather than report a partial search as complete."""
    needle = phrase.casefold()
    scope = MemoryScope.of(settings, user_id)
    hits: list[MemoryHit] = []
    for store in _stores(home, settings, scope):
        for number, entry in enumerate(store.entries(), start=1):
            if needle in entry.casefold():
                hits.append(MemoryHit(store.filename, str(number), entry))
    archived, marks = MemoryArchive(home, scope).mentioning(needle)
    hits += [MemoryHit("archive", str(e.id), e.content) for e in archived]
    hits += [MemoryHit("priority", target, content) for target, content in marks]
    for record in open_pending(home, settings, scope.user_id).list():
        text = record.summary()
        if needle in text.casefold() or any(
            needle in v.casefold() for v in record.expected.values()
        ):
            hits.append(MemoryHit("pending", record.id, text))
    for path in _side_files(home, scope):
        if _mentions_bytes(path, needle):
            hits.append(MemoryHit("copy", str(path), path.name))
    return hits


def forget_phrase(
    home: Path, settings: MemorySettings, user_id: str | None, phrase: str
) -> list[MemoryHit]:
    """Remove every match :func:`find_phrase` finds; returns what was removed. Entries go
    under the store's lock (a concurrent write is never lost); drifted or unreadable files
    raise :class:`~.store.StoreRefusal` (nothing of that file is changed)."""
    needle = phrase.casefold()
    scope = MemoryScope.of(settings, user_id)
    removed: list[MemoryHit] = []
    for store in _stores(home, settings, scope):

        def mutate(entries: list[str], store: EntryStore = store) -> Change:
            gone = [(i, e) for i, e in enumerate(entries, start=1) if needle in e.casefold()]
            removed.extend(MemoryHit(store.filename, str(i), e) for i, e in gone)
            kept = [e for e in entries if needle not in e.casefold()]
            return Change(kept if gone else None)

        store.transact(mutate, drift_guard=False)
    archive = MemoryArchive(home, scope)
    archived, marks = archive.mentioning(needle)
    if archived or marks:
        archive.purge([e.id for e in archived], marks)
        removed += [MemoryHit("archive", str(e.id), e.content) for e in archived]
        removed += [MemoryHit("priority", target, content) for target, content in marks]
    pending = open_pending(home, settings, scope.user_id)
    for hit in [h for h in find_phrase(home, settings, user_id, phrase) if h.store == "pending"]:
        if pending.discard(hit.ref):
            removed.append(hit)
    for path in _side_files(home, scope):
        if _mentions_bytes(path, needle):
            path.unlink()
            removed.append(MemoryHit("copy", str(path), path.name))
    return removed


def forget_scope(home: Path, settings: MemorySettings, user_id: str) -> int:
    """Delete everything the memory layer holds of ``user_id`` alone: both files (a shared
    MEMORY.md is not theirs and stays), archive rows, staged writes and the user's local
    directory. Returns the number of entries and rows removed."""
    scope = MemoryScope.of(settings, user_id)
    count = 0
    for store in _stores(home, settings, scope):
        if store.owner != scope.user_id:
            continue

        def clear(entries: list[str]) -> Change:
            return Change([] if entries else None, len(entries))

        count += int(store.transact(clear, drift_guard=False) or 0)
    count += MemoryArchive(home, scope).purge_scope()
    pending = open_pending(home, settings, scope.user_id)
    for record in pending.list():
        count += int(pending.discard(record.id))
    if scope.user_id is not None:  # never the no-user directories (the roots)
        for directory in (scope.directory(home, "user"), pending_directory(home, scope)):
            if directory.is_dir() and not directory.is_symlink():
                shutil.rmtree(directory, ignore_errors=True)
    return count


def pending_directory(home: Path, scope: MemoryScope) -> Path:
    """The staged-writes directory of ``scope``'s user in this home (files store)."""
    from .approval import PendingStore

    return PendingStore(home, scope.user_id).directory


__all__ = ["MemoryHit", "find_phrase", "forget_phrase", "forget_scope"]
