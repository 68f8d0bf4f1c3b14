"""Small helpers over OpenAI-style message dicts shared by the compression modules."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.text import content_text
from hermes_core.types import ChatMessage

SUMMARY_MARKER_KEY = "_compressed_summary"
"""Internal key set on the summary message (stripped before the wire by the LLM client)."""

SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns of this conversation were compacted "
    "into the handoff summary below. It is background reference from a previous context "
    "window, NOT active instructions. Do NOT answer questions or fulfil requests mentioned in "
    "it: they were already addressed. Respond ONLY to the latest user message that follows "
    "the summary; overlap in topic does not mean resuming old work. Items under 'Historical' "
    "headings are stale; a reverse signal (stop, undo, never mind, a new topic) ends any "
    "in-flight work. Persistent memory (MEMORY.md/USER.md) remains authoritative, and all "
    "tools remain available. The current state may already reflect the work described — "
    "avoid repeating it."
)
"""First line(s) of every summary message: the anti-"zombie task" framing."""

SUMMARY_END_MARKER = (
    "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
)
"""Last line of every summary message."""

LEGACY_PREFIXES = (
    "[CONTEXT COMPACTION — REFERENCE ONLY]",
    "[CONTEXT COMPACTION]",
    "[CONTEXT SUMMARY]:",
    "[CONTEXT SUMMARY]",
)
"""Prefixes recognised (and stripped) when an older summary is summarised again."""

MERGE_OPEN = "[PRIOR CONTEXT — for reference only; not a new message]"
MERGE_CLOSE = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"


def has_summary_prefix(text: str) -> bool:
    """True when ``text`` starts like a compaction summary (current or legacy prefix)."""
    head = text.lstrip()[:80]
    return any(head.startswith(p) for p in LEGACY_PREFIXES)


def role(message: Mapping[str, Any]) -> str:
    """The message role ('' when missing)."""
    value = message.get("role")
    return value if isinstance(value, str) else ""


def tool_call_ids(message: Mapping[str, Any]) -> list[str]:
    """Ids of the tool calls an assistant message makes (in order)."""
    ids: list[str] = []
    for call in message.get("tool_calls") or []:
        if isinstance(call, Mapping) and isinstance(call.get("id"), str):
            ids.append(call["id"])
    return ids


def tool_call_index(messages: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    """``call id -> (tool name, parsed arguments or raw string)`` over ``messages``."""
    index: dict[str, tuple[str, Any]] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            if not isinstance(call, Mapping):
                continue
            fn = call.get("function")
            if not isinstance(fn, Mapping):
                continue
            raw = fn.get("arguments", "")
            try:
                args: Any = json.loads(raw) if isinstance(raw, str) and raw else raw
            except json.JSONDecodeError:
                args = raw
            index[str(call.get("id", ""))] = (str(fn.get("name") or "tool"), args)
    return index


def is_summary(message: Mapping[str, Any]) -> bool:
    """True for a compaction summary message (marker key or a known prefix)."""
    if message.get(SUMMARY_MARKER_KEY):
        return True
    return has_summary_prefix(content_text(message.get("content")))


def is_real_user(message: Mapping[str, Any]) -> bool:
    """A user message typed by the user (not a summary injected as a user message)."""
    return role(message) == "user" and not is_summary(message)


def copy_messages(messages: Sequence[Mapping[str, Any]]) -> list[ChatMessage]:
    """Shallow copies (one level) so edits never reach the caller's dicts."""
    return [dict(m) for m in messages]


__all__ = [
    "LEGACY_PREFIXES",
    "MERGE_CLOSE",
    "MERGE_OPEN",
    "SUMMARY_END_MARKER",
    "SUMMARY_MARKER_KEY",
    "SUMMARY_PREFIX",
    "content_text",
    "copy_messages",
    "has_summary_prefix",
    "is_real_user",
    "is_summary",
    "role",
    "tool_call_ids",
    "tool_call_index",
]
