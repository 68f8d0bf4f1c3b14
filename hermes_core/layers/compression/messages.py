"""Small helpers over OpenAI-style message dicts shared by the compression modules."""

from __future__ import annotations

import json
import re
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


_FRAMING_CUES = re.compile(
    r"(?i)reference only|not (?:active )?instructions|previous context|context window|"
    r"compact(?:ed|ion)|handoff|respond only|do not (?:answer|resume|fulfil)|resume|"
    r"earlier turns|仅供参考|不是指令|之前的上下文|压缩"
)
_STRUCTURED_LINE = re.compile(r"^\s*(?:#|[-*•]\s|\d+[.)]\s)", re.MULTILINE)


def _is_framing_paragraph(paragraph: str) -> bool:
    """An old version's framing sentences after a short prefix: prose (no headings, bullets
    or numbered lines) that names at least two distinct framing cues."""
    if not paragraph.strip() or len(paragraph) > 2_000 or _STRUCTURED_LINE.search(paragraph):
        return False
    return len({m.group(0).lower() for m in _FRAMING_CUES.finditer(paragraph)}) >= 2


def _strip_prefixes(text: str) -> str:
    """``text`` without every leading summary prefix (repeated ones too) and the framing
    paragraph an older prefix carried; the whole body after it is kept."""
    body = text.strip()
    while True:
        if body.startswith(SUMMARY_PREFIX):
            body = body[len(SUMMARY_PREFIX) :].strip()
            continue
        prefix = next((p for p in LEGACY_PREFIXES if body.startswith(p)), None)
        if prefix is None:
            return body
        rest = body[len(prefix) :].strip()
        first, sep, after = rest.partition("\n\n")
        body = after.strip() if sep and _is_framing_paragraph(first) else rest


def split_summary(text: str) -> tuple[str, str]:
    """``(summary body, own text)`` of a message that carries a compaction summary.

    The body is everything between the prefix (current, legacy or repeated) and the END
    marker, multi-line and with blank lines, framing removed. *Own text* is what the message
    said besides the summary: the user's words after the END marker (a summary merged into
    a user message) or the assistant's words inside :data:`MERGE_OPEN` … :data:`MERGE_CLOSE`.
    Text without any summary framing comes back as ``("", text)``.
    """
    own: list[str] = []
    rest = text
    if rest.lstrip().startswith(MERGE_OPEN) and MERGE_CLOSE in rest:
        inner, _, rest = rest.lstrip()[len(MERGE_OPEN) :].partition(MERGE_CLOSE)
        own.append(inner.strip())
    if not has_summary_prefix(rest) and SUMMARY_END_MARKER not in rest:
        return "", text
    body, marker, after = rest.partition(SUMMARY_END_MARKER)
    while marker and not _strip_prefixes(body) and SUMMARY_END_MARKER in after:
        body, marker, after = after.partition(SUMMARY_END_MARKER)  # an empty summary first
    if marker:
        # a doubled summary: later framed copies belong to the body, not to the own text
        while has_summary_prefix(after) and SUMMARY_END_MARKER in after:
            extra, _, after = after.partition(SUMMARY_END_MARKER)
            extra_body = _strip_prefixes(extra)
            if extra_body and extra_body not in body:
                body = f"{body.rstrip()}\n\n{extra_body}"
        own.append(after.strip())
    return _strip_prefixes(body), "\n\n".join(part for part in own if part)


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
    """True for a message that carries a compaction summary: the marker key, a known prefix,
    or an assistant message the summary was merged into (:data:`MERGE_OPEN` first)."""
    if message.get(SUMMARY_MARKER_KEY):
        return True
    text = content_text(message.get("content"))
    if has_summary_prefix(text):
        return True
    return text.lstrip().startswith(MERGE_OPEN) and MERGE_CLOSE in text


def without_summary(message: Mapping[str, Any]) -> ChatMessage | None:
    """``message`` with any compaction summary taken out: ordinary messages come back as
    (shallow) copies; a merged message keeps only its own words (and its tool calls); a pure
    summary message gives ``None``."""
    if not is_summary(message):
        return dict(message)
    own = split_summary(content_text(message.get("content")))[1]
    if not own and not message.get("tool_calls"):
        return None
    out = {k: v for k, v in message.items() if k != SUMMARY_MARKER_KEY}
    out["content"] = own or None
    return out


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
    "split_summary",
    "tool_call_ids",
    "tool_call_index",
    "without_summary",
]
