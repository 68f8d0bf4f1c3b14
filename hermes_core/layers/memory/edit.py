"""Whole-file edits of MEMORY.md / USER.md (``hermes-memory memory edit`` and library callers).

An edit is two calls around whatever produces the new text (an editor, a form, a script):

* :func:`begin_edit` reads the file as it is now — its exact bytes, kept to detect a
  concurrent writer, and its text. A file that is not UTF-8 is still opened (undecodable
  bytes become U+FFFD, ``base.not_utf8`` says why): an edit is the way to repair such a file,
  which the ``memory`` tool refuses to touch.
* :func:`save_edit` applies the same rules as the ``memory`` tool to the new text: it must
  be UTF-8, fit the budget, have no entry longer than the budget and pass the strict threat
  scan. Then, holding the store's lock, it writes only if the store still has the bytes
  :func:`begin_edit` saw (locked compare-and-write,
  :meth:`~.store.EntryStore.replace_if_unchanged`, for files and PostgreSQL alike); a repaired
  non-UTF-8 file keeps its original bytes in ``<file>.bak.<unix-ts>``.

Every refusal raises :class:`EditRefused` with the reason, after saving the edited text to a
recovery file (``recovery/<FILE>.<timestamp>.txt`` next to the memory file, 0600): nothing
the user typed is lost, and a later edit can start from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from hermes_core.errors import HermesError
from hermes_core.fsutil import atomic_write_text, ensure_private_dir
from hermes_core.security.scan import find_threats
from hermes_core.types import MemoryTarget

from .store import (
    FILENAMES,
    EditConflict,
    EntryStore,
    char_count,
    parse_entries,
    serialize,
)

RefusalKind = Literal["not_utf8", "invalid", "conflict"]


class EditRefused(HermesError):
    """An edit was not saved. ``recovery`` holds the edited text; ``problems`` lists what
    failed validation (kind ``invalid``)."""

    def __init__(
        self,
        kind: RefusalKind,
        message: str,
        recovery: Path,
        problems: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: RefusalKind = kind
        self.recovery = recovery
        self.problems = problems or []


@dataclass(frozen=True)
class EditBase:
    """The file an edit starts from: its exact bytes and their text."""

    store: EntryStore
    original: bytes
    text: str
    not_utf8: str | None = None
    """Why the file is not valid UTF-8 (``"invalid start byte at byte 24"``), else None."""


@dataclass(frozen=True)
class EditResult:
    """A saved (or unchanged) edit."""

    changed: bool
    entries: list[str] = field(default_factory=list)
    backup: Path | None = None


def validate_edit(text: str, target: MemoryTarget, limit: int) -> tuple[list[str], list[str]]:
    """(entries, problems) of an edited file's text; problems empty = safe to save."""
    entries = parse_entries(text)
    problems: list[str] = []
    size = char_count(entries)
    if size > limit:
        problems.append(
            f"{FILENAMES[target]} would be {size:,}/{limit:,} chars — over budget; shorten or "
            "remove entries"
        )
    for number, entry in enumerate(entries, start=1):
        if len(entry) > limit:
            problems.append(f"entry {number} alone is longer than the {limit:,}-char budget")
        ids = find_threats(entry, "strict")
        if ids:
            problems.append(f"entry {number} matches blocked pattern(s): {', '.join(ids)}")
    return entries, problems


def recovery_dir(store: EntryStore) -> Path:
    """Where refused edits of ``store`` are kept: ``recovery/`` in the owner's local memory
    directory (next to the file of the files store)."""
    return store.local_dir / "recovery"


def save_recovery(store: EntryStore, text: str) -> Path:
    """Keep ``text`` in a new 0600 file ``recovery/<FILE>.<YYYYmmdd-HHMMSS>[-N].txt``."""
    directory = ensure_private_dir(recovery_dir(store))
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = directory / f"{store.filename}.{stamp}.txt"
    counter = 1
    while path.exists():
        counter += 1
        path = directory / f"{store.filename}.{stamp}-{counter}.txt"
    atomic_write_text(path, text)
    return path


def begin_edit(store: EntryStore) -> EditBase:
    """Read ``store``'s file for an edit (a missing file is empty). Raises OSError when it
    exists but cannot be read (a FIFO or other non-regular file included: never a hang), or
    a HermesError when the database store cannot be reached."""
    original = store.read_original()
    try:
        return EditBase(store, original, original.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        reason = f"{exc.reason} at byte {exc.start}"
        return EditBase(store, original, original.decode("utf-8-sig", "replace"), reason)


def save_edit(base: EditBase, edited: str | bytes) -> EditResult:
    """Validate ``edited`` and write it over the file if nobody changed it meanwhile.

    Raises :class:`EditRefused` (text kept in a recovery file, the memory file untouched)
    when the text is not UTF-8, fails :func:`validate_edit`, or the file changed on disk since
    :func:`begin_edit`. Write failures raise OSError with the file unchanged."""
    store = base.store
    if isinstance(edited, bytes):
        raw = edited
        try:
            edited = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            path = save_recovery(store, raw.decode("utf-8", "replace"))
            raise EditRefused(
                "not_utf8", f"the edited text is not valid UTF-8 ({exc.reason})", path
            ) from exc
    entries, problems = validate_edit(edited, store.target, store.limit)
    if problems:
        path = save_recovery(store, edited)
        raise EditRefused("invalid", "; ".join(problems), path, problems)
    new_text = serialize(entries)
    if new_text == base.text and base.not_utf8 is None:
        return EditResult(changed=False, entries=entries)
    try:
        backup = store.replace_if_unchanged(
            base.original, new_text, keep_original=base.not_utf8 is not None
        )
    except EditConflict as exc:
        path = save_recovery(store, edited)
        raise EditRefused("conflict", str(exc), path) from exc
    return EditResult(changed=True, entries=entries, backup=backup)


__all__ = [
    "EditBase",
    "EditRefused",
    "EditResult",
    "begin_edit",
    "recovery_dir",
    "save_edit",
    "save_recovery",
    "validate_edit",
]
