"""Pure memory operations on a list of entries (no I/O): matching and applying.

Matching rule for ``old_text``: an entry *equal* to it wins; otherwise every entry containing
it (case-sensitive substring). Several matches are an error unless they are byte-identical.
``old_text`` only locates an entry: replace rewrites the *whole* matched entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from hermes_core.errors import clip

ACTIONS = ("add", "replace", "remove")
PREVIEW_CHARS = 80
MATCHES_SHOWN = 20
"""At most this many previews in an ambiguity error (then "... and N more")."""

ErrorKind = Literal["empty", "no_match", "ambiguous", "invalid"]


@dataclass(frozen=True)
class Operation:
    """One validated operation; ``content`` and ``old_text`` are stripped."""

    action: Literal["add", "replace", "remove"]
    content: str | None = None
    old_text: str | None = None
    priority: str = "normal"

    def to_dict(self) -> dict[str, str]:
        out: dict[str, str] = {"action": self.action}
        if self.content is not None:
            out["content"] = self.content
        if self.old_text is not None:
            out["old_text"] = self.old_text
        if self.priority != "normal":
            out["priority"] = self.priority
        return out


class OpError(Exception):
    """An operation cannot apply; ``kind`` drives counters and response shape."""

    def __init__(self, kind: ErrorKind, message: str, matches: list[str] | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.matches = matches or []
        self.op_index = 0
        self.op_action = ""


def preview(entry: str) -> str:
    """One-line preview: first 80 chars (newlines flattened), ``...`` when longer."""
    flat = " ".join(entry.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS] + "..."


def find_matches(entries: Sequence[str], old_text: str) -> list[int]:
    """Indexes of entries located by ``old_text`` (exact whole-entry match wins)."""
    exact = [i for i, entry in enumerate(entries) if entry == old_text]
    if exact:
        return exact
    return [i for i, entry in enumerate(entries) if old_text in entry]


def locate(
    entries: Sequence[str], old_text: str, render: Callable[[str], str] | None = None
) -> int:
    """The one entry ``old_text`` designates; raises :class:`OpError` otherwise. ``render``
    turns an entry into what an ambiguity preview may show (the sanitiser)."""
    if not old_text:
        raise OpError("empty", "old_text cannot be empty.")
    found = find_matches(entries, old_text)
    if not found:
        raise OpError("no_match", f"No entry matched '{clip(old_text)}'.")
    if len({entries[i] for i in found}) > 1:
        show = render or (lambda entry: entry)
        previews = [preview(show(entries[i])) for i in found[:MATCHES_SHOWN]]
        if len(found) > MATCHES_SHOWN:
            previews.append(f"... and {len(found) - MATCHES_SHOWN:,} more")
        raise OpError(
            "ambiguous",
            f"Multiple entries matched '{clip(old_text)}'. Be more specific.",
            previews,
        )
    return found[0]


@dataclass
class Applied:
    """Result of :func:`apply_operations` (indexes are 1-based op positions)."""

    entries: list[str]
    replaced: dict[int, str] = field(default_factory=dict)
    removed: dict[int, str] = field(default_factory=dict)
    added: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)


class _Entries:
    """The working copy of a batch: slots with tombstones plus an entry → slot index, so an
    add, an exact-match replace/remove and a membership test cost O(1) and a removal never
    shifts the list. Entries are unique (files are de-duplicated on read; adds of an
    existing entry are skipped; a replace into an existing entry merges)."""

    def __init__(self, entries: Sequence[str]) -> None:
        self.slots: list[str | None] = []
        self.index: dict[str, int] = {}
        for entry in entries:
            if entry not in self.index:
                self.index[entry] = len(self.slots)
                self.slots.append(entry)

    def __contains__(self, entry: str) -> bool:
        return entry in self.index

    def append(self, entry: str) -> None:
        self.index[entry] = len(self.slots)
        self.slots.append(entry)

    def locate(self, old_text: str) -> int:
        """The slot ``old_text`` designates (same rule and errors as :func:`locate`)."""
        if not old_text:
            raise OpError("empty", "old_text cannot be empty.")
        exact = self.index.get(old_text)
        if exact is not None:
            return exact
        found = [i for i, entry in enumerate(self.slots) if entry is not None and old_text in entry]
        if not found:
            raise OpError("no_match", f"No entry matched '{clip(old_text)}'.")
        if len(found) > 1:
            live = [entry for entry in self.slots if entry is not None]
            locate(live, old_text)  # raises the ambiguity error with its previews
        return found[0]

    def get(self, slot: int) -> str:
        entry = self.slots[slot]
        assert entry is not None
        return entry

    def remove(self, slot: int) -> str:
        entry = self.get(slot)
        self.slots[slot] = None
        del self.index[entry]
        return entry

    def put(self, slot: int, entry: str) -> None:
        del self.index[self.get(slot)]
        self.slots[slot] = entry
        self.index[entry] = slot

    def entries(self) -> list[str]:
        return [entry for entry in self.slots if entry is not None]


def apply_operations(entries: Sequence[str], ops: Sequence[Operation]) -> Applied:
    """Apply ``ops`` in order to a copy of ``entries``.

    An add of an existing entry is skipped (idempotent). Raises :class:`OpError` for the
    first failing operation, with ``op_index`` (1-based) and ``op_action`` set. Work is O(1)
    per add and per exact-match replace/remove; a substring ``old_text`` scans the entries
    once — a batch of N operations never re-copies or re-shifts the list (no O(N²)).
    """
    work = _Entries(entries)
    out = Applied(entries=[])
    for index, op in enumerate(ops, start=1):
        try:
            if op.action == "add":
                if not op.content:
                    raise OpError("empty", "Content cannot be empty.")
                if op.content in work:
                    out.skipped.append(index)
                    continue
                work.append(op.content)
                out.added.append(index)
            elif op.action == "replace":
                if not op.content:
                    raise OpError(
                        "empty", "new_content cannot be empty. Use 'remove' to delete entries."
                    )
                slot = work.locate(op.old_text or "")
                current = work.get(slot)
                out.replaced[index] = current
                if op.content in work and current != op.content:
                    work.remove(slot)  # replacing into an existing entry merges the two
                elif current != op.content:
                    work.put(slot, op.content)
            elif op.action == "remove":
                out.removed[index] = work.remove(work.locate(op.old_text or ""))
            else:
                raise OpError(
                    "invalid",
                    f"Unknown action '{clip(op.action, PREVIEW_CHARS)}'. Use: add, replace, remove",
                )
        except OpError as exc:
            exc.op_index = index
            exc.op_action = op.action
            raise
    out.entries = work.entries()
    return out


__all__ = [
    "ACTIONS",
    "Applied",
    "OpError",
    "Operation",
    "apply_operations",
    "find_matches",
    "locate",
    "preview",
]
