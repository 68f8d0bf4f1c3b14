"""Pure memory operations on a list of entries (no I/O): matching and applying.

Matching rule for ``old_text``: an entry *equal* to it wins; otherwise every entry containing
it (case-sensitive substring). Several matches are an error unless they are byte-identical.
``old_text`` only locates an entry: replace rewrites the *whole* matched entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

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
        raise OpError("no_match", f"No entry matched '{old_text}'.")
    if len({entries[i] for i in found}) > 1:
        show = render or (lambda entry: entry)
        previews = [preview(show(entries[i])) for i in found[:MATCHES_SHOWN]]
        if len(found) > MATCHES_SHOWN:
            previews.append(f"... and {len(found) - MATCHES_SHOWN:,} more")
        raise OpError(
            "ambiguous",
            f"Multiple entries matched '{old_text}'. Be more specific.",
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


def apply_operations(entries: Sequence[str], ops: Sequence[Operation]) -> Applied:
    """Apply ``ops`` in order to a copy of ``entries``.

    An add of an existing entry is skipped (idempotent). Raises :class:`OpError` for the
    first failing operation, with ``op_index`` (1-based) and ``op_action`` set.
    """
    work = list(entries)
    out = Applied(entries=work)
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
                position = locate(work, op.old_text or "")
                out.replaced[index] = work[position]
                if op.content in work and work[position] != op.content:
                    # Replacing into an existing entry merges the two.
                    del work[position]
                else:
                    work[position] = op.content
            elif op.action == "remove":
                position = locate(work, op.old_text or "")
                out.removed[index] = work.pop(position)
            else:
                raise OpError("invalid", f"Unknown action '{op.action}'. Use: add, replace, remove")
        except OpError as exc:
            exc.op_index = index
            exc.op_action = op.action
            raise
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
