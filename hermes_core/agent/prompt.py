"""System prompt assembly for the reference agent loop (in this order).

::

    identity        $HERMES_HOME/SOUL.md (scanned, capped) or DEFAULT_IDENTITY
    tool guidance   what session_search / skills are for (the memory layer adds its own)
    layer blocks    Session.system_prompt(): provider block, MEMORY, USER, skills index
    context files   .hermes.md or HERMES.md, then AGENTS.md from the working directory
    session line    "Conversation started: <UTC time> · session <id> · model <m>"

Everything is rendered once when the session opens: the result is byte-identical for the
whole session (the timestamp is the session's start, not "now"). Context files are scanned
at the ``context`` scope — all of the text that reaches the prompt, including the kept tail of
a long file; a flagged file is replaced by
:func:`~hermes_core.security.scan.context_block_message`. Files longer than
``agent.context_file_char_cap`` keep 70 % head and 20 % tail around a marker.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from hermes_core.fsutil import read_regular_text
from hermes_core.security.scan import MAX_SCAN_CHARS, context_block_message, scan

log = logging.getLogger(__name__)

DEFAULT_IDENTITY = (
    "You are Hermes, a helpful assistant with a persistent memory. You remember the user "
    "across conversations through your memory notes, a searchable archive of past sessions "
    "and skills (saved procedures). Be direct and accurate; say when you do not know."
)

WINDOW_OVERLAP = 2_000
"""Characters shared by neighbouring scan windows, so a phrase on a boundary is seen whole."""

SOUL_FILE = "SOUL.md"
CONTEXT_FILE_MAX_BYTES = 8 * 1024 * 1024
"""A context file larger than this is not loaded (it would be cut to its cap anyway)."""
CONTEXT_FILE_GROUPS: tuple[tuple[str, ...], ...] = ((".hermes.md", "HERMES.md"), ("AGENTS.md",))
"""Project context files, in prompt order; within a group the first file found wins."""


@dataclass(frozen=True)
class ContextFile:
    """One loaded context file as it appears in the prompt."""

    name: str
    path: Path
    text: str
    blocked: bool = False
    truncated: bool = False


def cap_text(text: str, cap: int, name: str) -> tuple[str, bool]:
    """``text`` if it fits ``cap`` chars, else 70 % head + marker + 20 % tail."""
    if len(text) <= cap:
        return text, False
    head = int(cap * 0.7)
    tail = int(cap * 0.2)
    cut = len(text) - head - tail
    marker = (
        f"\n\n[... {cut:,} chars truncated from {name} (over the {cap:,}-char cap; "
        "agent.context_file_char_cap) ...]\n\n"
    )
    return text[:head] + marker + text[-tail:], True


def load_context_file(path: Path, cap: int) -> ContextFile | None:
    """Read, scan and cap one file; None when missing or unreadable (logged)."""
    try:
        raw = read_regular_text(path, max_bytes=CONTEXT_FILE_MAX_BYTES, what="context file")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("context file %s not loaded: %s", path, exc)
        return None
    if not raw.strip():
        return None
    text, truncated = cap_text(raw.strip(), cap, path.name)
    ids = scan_whole(raw if not truncated else text)
    if truncated:  # the kept tail lies past the scanner's window of a long file
        ids = list(dict.fromkeys([*scan(raw, "context").pattern_ids, *ids]))
    if ids:
        log.warning("context file %s blocked: %s", path, ", ".join(ids))
        return ContextFile(path.name, path, context_block_message(path.name, ids), blocked=True)
    return ContextFile(path.name, path, text, truncated=truncated)


def scan_whole(text: str) -> list[str]:
    """Context-scope threat ids of ALL of ``text`` (the scanner reads only its first
    ``MAX_SCAN_CHARS``; longer text is scanned in overlapping windows)."""
    step = MAX_SCAN_CHARS - WINDOW_OVERLAP
    ids: dict[str, None] = {}
    for start in range(0, max(len(text) - WINDOW_OVERLAP, 1), step):
        ids.update(dict.fromkeys(scan(text[start : start + MAX_SCAN_CHARS], "context").pattern_ids))
    return list(ids)


def context_files(cwd: Path, cap: int) -> list[ContextFile]:
    """The project context files of ``cwd`` (see :data:`CONTEXT_FILE_GROUPS`)."""
    found: list[ContextFile] = []
    for group in CONTEXT_FILE_GROUPS:
        for name in group:
            loaded = load_context_file(cwd / name, cap)
            if loaded is not None:
                found.append(loaded)
                break
    return found


def identity(home: Path, cap: int) -> str:
    """SOUL.md from the Hermes home (scanned, capped) or the default identity."""
    soul = load_context_file(home / SOUL_FILE, cap)
    return soul.text if soul is not None else DEFAULT_IDENTITY


def tool_guidance(tool_names: Collection[str]) -> str:
    """Short guidance for the memory-system tools the model can call (empty when none)."""
    lines: list[str] = []
    if "session_search" in tool_names:
        lines.append(
            "- session_search finds past conversations by keywords (or lists recent ones). "
            "Use it when the user refers to something discussed before that is not in your "
            "memory."
        )
    if "skill_view" in tool_names or "skills_list" in tool_names:
        lines.append(
            "- Skills are saved procedures. When a task matches a skill in the index, load it "
            "with skill_view before acting and follow it."
        )
    if "skill_manage" in tool_names:
        lines.append(
            "- After a non-trivial task that needed trial and error, save the working "
            "approach with skill_manage (patch an existing skill before creating a new one)."
        )
    if not lines:
        return ""
    return "## Tools for remembering\n" + "\n".join(lines)


def session_line(session_id: str, started_at: float, model: str | None) -> str:
    """The volatile last line, rendered from the session's start time."""
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started_at))
    parts = [f"Conversation started: {stamp}", f"session {session_id}"]
    if model:
        parts.append(f"model {model}")
    return " · ".join(parts)


def assemble(
    *,
    home: Path,
    cwd: Path,
    layer_blocks: str,
    tool_names: Collection[str],
    session_id: str,
    started_at: float,
    model: str | None,
    context_cap: int,
) -> str:
    """The full system prompt in spec order; empty parts are skipped."""
    parts = [identity(home, context_cap), tool_guidance(tool_names), layer_blocks.strip()]
    files = context_files(cwd, context_cap)
    if files:
        rendered = [f"## {f.name}\n\n{f.text}" for f in files]
        parts.append("# Project context\n\n" + "\n\n".join(rendered))
    parts.append(session_line(session_id, started_at, model))
    return "\n\n".join(part for part in parts if part.strip())


__all__ = [
    "CONTEXT_FILE_GROUPS",
    "DEFAULT_IDENTITY",
    "SOUL_FILE",
    "ContextFile",
    "assemble",
    "cap_text",
    "context_files",
    "identity",
    "load_context_file",
    "session_line",
    "tool_guidance",
]
