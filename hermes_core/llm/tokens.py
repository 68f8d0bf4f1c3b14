"""Token estimates without a tokenizer download.

English BPE averages about four characters per token; CJK ideographs, kana and hangul are
roughly one token each (often more). Estimating Chinese at chars/4 would under-count by ~4×
and let a Chinese transcript blow the context window, so the two are counted separately.
When the API reports real usage, callers should prefer it (see ``UsageTracker``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

_WIDE = re.compile(
    r"[\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)
MESSAGE_OVERHEAD_TOKENS = 4
"""Per-message framing (role, separators) in chat formats."""


def estimate_tokens(text: str | None) -> int:
    """Estimated tokens of ``text``: one per CJK/wide character plus ceil(rest / 4)."""
    if not text:
        return 0
    wide = len(_WIDE.findall(text))
    rest = len(text) - wide
    return wide + (rest + 3) // 4


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, Mapping):
                if part.get("type") == "text":
                    parts.append(str(part.get("text", "")))
                elif part.get("type") in {"image_url", "input_image", "image"}:
                    parts.append("x" * 3000)  # images cost ~765+ tokens; be conservative
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return str(content)


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one OpenAI-style message, including tool-call envelopes."""
    total = MESSAGE_OVERHEAD_TOKENS + estimate_tokens(_content_text(message.get("content")))
    tool_calls = message.get("tool_calls")
    if tool_calls:
        total += estimate_tokens(json.dumps(tool_calls, ensure_ascii=False))
    for key in ("reasoning", "name", "tool_call_id"):
        value = message.get(key)
        if isinstance(value, str):
            total += estimate_tokens(value)
    return total


def estimate_messages_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """Sum of :func:`estimate_message_tokens` over ``messages``."""
    return sum(estimate_message_tokens(m) for m in messages)


__all__ = [
    "MESSAGE_OVERHEAD_TOKENS",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_tokens",
]
