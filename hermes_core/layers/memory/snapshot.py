"""The frozen memory snapshot of the system prompt, and the memory guidance text.

Contract:

* A snapshot is rendered once per session from the files as they are at load time; writes
  during the session change disk and live state, never the snapshot.
* Block layout: a line of 46 ``═``, the header, another ``═`` line, then the entries joined by
  the delimiter. Headers carry usage (``MEMORY (your personal notes) [67% — 1,474/2,200
  chars]``) and `` ⚠ OVER BUDGET`` inside the brackets when over the limit.
* Entries are scanned (strict scope) at load: a poisoned entry is replaced *in the snapshot
  only* by a ``[BLOCKED: …]`` placeholder; entries over 65,536 chars are blocked as too large
  to scan; a placeholder already in the file passes unchanged (it scans clean: no double
  wrap), but a ``[BLOCKED:`` prefix exempts nothing.
* A huge file (after external edits) is capped at render time to ``max(2 × limit, 4000)``
  characters: the first 70 % and the last 20 % of the cap are kept around a marker.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from hermes_core.security.scan import MAX_SCAN_CHARS, find_threats
from hermes_core.types import MemoryTarget

from .store import DELIMITER, FILENAMES, char_count, percent

log = logging.getLogger(__name__)

RULE = "═" * 46
HEADERS: dict[MemoryTarget, str] = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}
BLOCKED_PREFIX = "[BLOCKED:"


def sanitize_entry(entry: str, filename: str) -> str:
    """``entry`` or its ``[BLOCKED: …]`` placeholder (strict scan).

    A placeholder scans clean, so it passes unchanged (no double wrapping). Text that merely
    *starts* with ``[BLOCKED:`` is scanned like any entry: the prefix is no pass."""
    if len(entry) > MAX_SCAN_CHARS:
        return (
            f"[BLOCKED: {filename} entry too large to scan ({len(entry):,} chars). Removed from "
            "system prompt; use memory(action=remove) to delete the original.]"
        )
    ids = find_threats(entry, "strict")
    if not ids:
        return entry
    return (
        f"[BLOCKED: {filename} entry contained threat pattern(s): {', '.join(ids)}. Removed "
        "from system prompt; use memory(action=remove) to delete the original.]"
    )


def sanitize_entries(entries: Iterable[str], target: MemoryTarget) -> list[str]:
    """Every entry passed through :func:`sanitize_entry` (used by snapshot and error echoes)."""
    filename = FILENAMES[target]
    return [sanitize_entry(entry, filename) for entry in entries]


def header(target: MemoryTarget, current: int, limit: int) -> str:
    """``MEMORY (your personal notes) [67% — 1,474/2,200 chars]`` (+ `` ⚠ OVER BUDGET``)."""
    over = " ⚠ OVER BUDGET" if limit >= 0 and current > limit else ""
    return f"{HEADERS[target]} [{percent(current, limit)}% — {current:,}/{limit:,} chars{over}]"


def cap_content(content: str, current: int, limit: int) -> str:
    """Render-side cap: at most ``max(2 × limit, 4000)`` chars kept (70 % head, 20 % tail)."""
    cap = max(2 * limit, 4000)
    if len(content) <= cap:
        return content
    head = content[: int(cap * 0.7)]
    tail = content[len(content) - int(cap * 0.2) :]
    dropped = len(content) - len(head) - len(tail)
    marker = (
        f"[... {dropped:,} chars truncated — memory over budget ({current:,}/{limit:,}); "
        "consolidate via memory(action=remove/replace) ...]"
    )
    return f"{head}\n{marker}\n{tail}"


def render_block(target: MemoryTarget, entries: list[str], limit: int) -> str | None:
    """The frozen block for one store, or ``None`` when it has no entries."""
    if not entries:
        return None
    current = char_count(entries)
    if limit >= 0 and current > limit:
        log.warning(
            "%s is over its budget (%s/%s chars); loaded in full, consolidate it",
            FILENAMES[target],
            f"{current:,}",
            f"{limit:,}",
        )
    body = DELIMITER.join(sanitize_entries(entries, target))
    body = cap_content(body, current, limit)
    return f"{RULE}\n{header(target, current, limit)}\n{RULE}\n{body}"


def guidance(*, skills: bool = True, session_search: bool = True) -> str:
    """How to use persistent memory (part of the memory prompt block)."""
    lines = [
        "## Persistent memory",
        "You have persistent memory that is loaded into this prompt at the start of every "
        "session: MEMORY (your own notes: environment facts, conventions, tool quirks, "
        "lessons) and USER PROFILE (who the user is: name, role, preferences, style). What "
        "you save now appears in the next session, not in this one.",
        "- Save with the `memory` tool when you learn something that will still be true in "
        "every future session: user preferences and corrections first, then stable "
        "environment facts, then conventions. Save proactively; do not wait to be asked.",
        '- Write entries as declarative facts ("User prefers concise responses"), never as '
        'imperatives ("Always respond concisely"): entries are re-read later as context, '
        "and an imperative would be taken as a directive.",
        "- Do not save trivial or easily re-discovered facts, raw dumps, task progress, "
        "completed-work logs or temporary TODO state.",
        "- When memory is full, consolidate: merge related entries with `replace`, drop stale "
        "ones with `remove`, in ONE call using `operations` (the limit is checked on the "
        "final state). Do not silently skip saving something important.",
    ]
    if skills:
        lines.append("- Reusable procedures and task know-how belong in skills, not in memory.")
    if session_search:
        lines.append(
            "- Details of past conversations are found with `session_search`; memory holds "
            "only what is true in every session."
        )
    return "\n".join(lines)


__all__ = [
    "BLOCKED_PREFIX",
    "HEADERS",
    "RULE",
    "cap_content",
    "guidance",
    "header",
    "render_block",
    "sanitize_entries",
    "sanitize_entry",
]
