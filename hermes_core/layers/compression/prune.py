"""The no-LLM pre-prune: cheap, deterministic shrinking before anything is summarised.

All functions return new lists of new dicts; the input is never mutated.

* :func:`dedupe_tool_outputs` — walking backwards, a tool result of ≥ 200 chars whose content
  equals a more recent one becomes :data:`DUPLICATE_NOTE`.
* :func:`summarize_old_tool_outputs` — tool results > 200 chars before ``protect_from`` become
  a one-line summary (``[terminal] ran `pytest` -> exit 1, 47 lines output; error: ...``).
  The first error line of the output is kept in the summary.
* :func:`shrink_tool_arguments` — tool-call argument JSON > 500 chars: string leaves cut to
  200 chars + ``...[truncated]``; the JSON stays valid (invalid JSON is left unchanged).
* :func:`strip_images` — images in tool results become :data:`SCREENSHOT_NOTE`; image parts of
  messages older than the newest image-bearing user message become :data:`IMAGE_NOTE`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.layers.compression.messages import (
    content_text,
    copy_messages,
    role,
    tool_call_index,
)
from hermes_core.types import ChatMessage

DUPLICATE_NOTE = "[Duplicate tool output — same content as a more recent call]"
SCREENSHOT_NOTE = "[screenshot removed to save context]"
IMAGE_NOTE = "[Attached image — stripped after compression]"
TRUNCATED = "...[truncated]"

OUTPUT_MIN_CHARS = 200
ARGS_MAX_CHARS = 500
ARG_LEAF_CHARS = 200

_IMAGE_TYPES = {"image_url", "input_image", "image"}
ERROR_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b"
    r"|(?i:\b(?:errors?|exception|traceback|failed|failure|fatal|panic|denied|refused|"
    r"not found|errno|exit (?:code|status) [1-9]\d*)\b)"
    r"|错误|失败|异常|报错|拒绝"
)
"""A line that reports a failure (EN and ZH)."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def dedupe_tool_outputs(messages: Sequence[Mapping[str, Any]]) -> list[ChatMessage]:
    """Replace older duplicates of long tool outputs with :data:`DUPLICATE_NOTE`."""
    out = copy_messages(messages)
    seen: set[str] = set()
    for message in reversed(out):
        if role(message) != "tool":
            continue
        text = content_text(message.get("content"))
        if len(text) < OUTPUT_MIN_CHARS:
            continue
        digest = _digest(text)
        if digest in seen:
            message["content"] = DUPLICATE_NOTE
        else:
            seen.add(digest)
    return out


def _first_error_line(text: str) -> str:
    for line in text.splitlines():
        if ERROR_LINE.search(line):
            return line.strip()[:160]
    return ""


def _arg_preview(args: Any) -> str:
    if isinstance(args, Mapping):
        parts = []
        for key, value in list(args.items())[:3]:
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(f"{key}={str(shown)[:60]}")
        more = " …" if len(args) > 3 else ""
        return " ".join(parts) + more
    return str(args)[:80]


def one_line_summary(tool: str, args: Any, output: str) -> str:
    """A one-line stand-in for a long tool output (keeps the first error line if any)."""
    a: Mapping[str, Any] = args if isinstance(args, Mapping) else {}
    lines = output.count("\n") + 1
    exit_code: Any = None
    try:
        parsed = json.loads(output)
        if isinstance(parsed, Mapping):
            exit_code = parsed.get("exit_code", parsed.get("returncode"))
    except (json.JSONDecodeError, ValueError):
        match = re.search(r"(?i)exit(?:ed)?(?: with)?(?: code| status)?[:= ]+(-?\d+)", output)
        exit_code = match.group(1) if match else None
    name = tool.lower()
    if name in {"terminal", "shell", "bash", "run_command", "exec"} and (
        a.get("command") or a.get("cmd")
    ):
        cmd = str(a.get("command") or a.get("cmd"))[:120]
        code = f"exit {exit_code}" if exit_code is not None else "done"
        summary = f"[{tool}] ran `{cmd}` -> {code}, {lines} lines output"
    elif "read" in name and (a.get("path") or a.get("file")):
        start = a.get("offset", a.get("start_line", 1))
        path = a.get("path") or a.get("file")
        summary = f"[{tool}] read {path} from line {start} ({len(output):,} chars)"
    elif name == "memory" and a.get("action"):
        summary = f"[memory] {a.get('action')} on {a.get('target', 'memory')}"
    else:
        preview = _arg_preview(args)
        summary = f"[{tool}] {preview} ({len(output):,} chars result)".replace("]  (", "] (")
    error = _first_error_line(output)
    if error:
        summary += f"; error: {error}"
    return summary


def summarize_old_tool_outputs(
    messages: Sequence[Mapping[str, Any]], protect_from: int, *, keep_last: int = 0
) -> list[ChatMessage]:
    """Replace tool outputs > 200 chars at indices < ``protect_from`` (and not among the last
    ``keep_last`` messages) with :func:`one_line_summary`."""
    out = copy_messages(messages)
    calls = tool_call_index(out)
    limit = min(protect_from, len(out) - keep_last)
    for index in range(max(0, limit)):
        message = out[index]
        if role(message) != "tool":
            continue
        text = content_text(message.get("content"))
        if len(text) <= OUTPUT_MIN_CHARS or text == DUPLICATE_NOTE:
            continue
        name, args = calls.get(str(message.get("tool_call_id", "")), ("tool", {}))
        message["content"] = one_line_summary(name, args, text)
    return out


def _shrink_leaves(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= ARG_LEAF_CHARS else value[:ARG_LEAF_CHARS] + TRUNCATED
    if isinstance(value, Mapping):
        return {k: _shrink_leaves(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrink_leaves(v) for v in value]
    return value


def shrink_tool_arguments(
    messages: Sequence[Mapping[str, Any]], protect_from: int | None = None
) -> list[ChatMessage]:
    """Shrink long tool-call argument JSON at indices < ``protect_from`` (all when None),
    keeping it valid JSON."""
    out = copy_messages(messages)
    stop = len(out) if protect_from is None else protect_from
    for message in out[:stop]:
        calls = message.get("tool_calls")
        if not calls:
            continue
        new_calls = []
        for call in calls:
            if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
                new_calls.append(call)
                continue
            fn = dict(call["function"])
            raw = fn.get("arguments")
            if isinstance(raw, str) and len(raw) > ARGS_MAX_CHARS:
                try:
                    parsed = json.loads(raw)
                except json.JSONDecodeError:
                    parsed = None
                if parsed is not None:
                    fn["arguments"] = json.dumps(_shrink_leaves(parsed), ensure_ascii=False)
            new_calls.append({**call, "function": fn})
        message["tool_calls"] = new_calls
    return out


def _has_image(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(p, Mapping) and p.get("type") in _IMAGE_TYPES for p in content
    )


def _replace_images(content: list[Any], note: str) -> list[Any]:
    return [
        {"type": "text", "text": note}
        if isinstance(p, Mapping) and p.get("type") in _IMAGE_TYPES
        else p
        for p in content
    ]


def strip_images(messages: Sequence[Mapping[str, Any]]) -> list[ChatMessage]:
    """Drop images from tool results and from messages older than the newest image-bearing
    user message."""
    out = copy_messages(messages)
    newest_user_image = -1
    for index, message in enumerate(out):
        if role(message) == "user" and _has_image(message):
            newest_user_image = index
    for index, message in enumerate(out):
        if not _has_image(message):
            continue
        if role(message) == "tool":
            message["content"] = _replace_images(message["content"], SCREENSHOT_NOTE)
        elif index < newest_user_image:
            message["content"] = _replace_images(message["content"], IMAGE_NOTE)
    return out


def prune(messages: Sequence[Mapping[str, Any]], protect_from: int) -> list[ChatMessage]:
    """All four passes, in order. Messages at ``protect_from`` and later keep their tool
    outputs verbatim (only duplicates and images there are touched)."""
    out = dedupe_tool_outputs(messages)
    out = summarize_old_tool_outputs(out, protect_from)
    out = shrink_tool_arguments(out, protect_from)
    return strip_images(out)


__all__ = [
    "DUPLICATE_NOTE",
    "ERROR_LINE",
    "IMAGE_NOTE",
    "SCREENSHOT_NOTE",
    "TRUNCATED",
    "dedupe_tool_outputs",
    "one_line_summary",
    "prune",
    "shrink_tool_arguments",
    "strip_images",
    "summarize_old_tool_outputs",
]
