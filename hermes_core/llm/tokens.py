"""Token estimates without a tokenizer download.

English BPE averages about four characters per token; CJK ideographs, kana and hangul are
roughly one token each (often more). Estimating Chinese at chars/4 would under-count by ~4×
and let a Chinese transcript blow the context window, so the two are counted separately.
When the API reports real usage, callers should prefer it (see ``UsageTracker``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.text import content_text

_WIDE = re.compile(
    r"[\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)
MESSAGE_OVERHEAD_TOKENS = 4
"""Per-message framing (role, separators) in chat formats."""


def wide_chars(text: str) -> int:
    """Characters of ``text`` that :func:`estimate_tokens` counts one token each."""
    return len(_WIDE.findall(text))


def estimate_tokens(text: str | None) -> int:
    """Estimated tokens of ``text``: one per CJK/wide character plus ceil(rest / 4)."""
    if not text:
        return 0
    wide = wide_chars(text)
    rest = len(text) - wide
    return wide + (rest + 3) // 4


_IMAGE_AS_TEXT = "x" * 3000
"""An image part costs roughly 765+ tokens; counted as 3,000 characters to stay conservative."""


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one OpenAI-style message, including tool-call envelopes."""
    total = MESSAGE_OVERHEAD_TOKENS + estimate_tokens(
        content_text(message.get("content"), image_placeholder=_IMAGE_AS_TEXT)
    )
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


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one API call as the server reported it (missing fields are 0)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @classmethod
    def from_api(cls, raw: Any) -> Usage | None:
        """Parse an OpenAI ``usage`` object; ``None`` when absent or not an object.

        Non-integer fields count as 0; a missing ``total_tokens`` is prompt + completion.
        """
        if not isinstance(raw, Mapping):
            return None

        def num(key: str) -> int:
            value = raw.get(key)
            return int(value) if isinstance(value, int | float) and value >= 0 else 0

        prompt, completion = num("prompt_tokens"), num("completion_tokens")
        total = num("total_tokens") or prompt + completion
        return cls(prompt, completion, total)


class UsageTracker:
    """Prompt-size bookkeeping that prefers what the API reported over estimates.

    After each model call, :meth:`record` the reported usage together with the number of
    messages that were sent. :meth:`prompt_tokens` then answers "how big is this transcript
    now?" as the last reported prompt plus the reported completion plus estimates of the
    messages appended since; before any report (or when the transcript shrank, e.g. after
    compression) it falls back to :func:`estimate_messages_tokens`. Totals accumulate over
    the tracker's life. Not thread-safe; keep one per session.
    """

    def __init__(self) -> None:
        self.calls = 0
        self.total_prompt_tokens = 0
        self.total_completion_tokens = 0
        self.last_usage: Usage | None = None
        self._covered_messages = 0

    def record(self, usage: Usage | None, messages_sent: int) -> None:
        """Remember one call's usage (``None`` when the server reported none)."""
        self.calls += 1
        self.last_usage = usage
        self._covered_messages = messages_sent if usage is not None else 0
        if usage is not None:
            self.total_prompt_tokens += usage.prompt_tokens
            self.total_completion_tokens += usage.completion_tokens

    def reset(self) -> None:
        """Forget the last report (call after the transcript was rewritten)."""
        self.last_usage = None
        self._covered_messages = 0

    @property
    def last_prompt_tokens(self) -> int:
        """The last reported prompt size (0 when unknown)."""
        return self.last_usage.prompt_tokens if self.last_usage else 0

    def prompt_tokens(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Best estimate of the prompt size of ``messages``; see the class docstring."""
        usage = self.last_usage
        covered = self._covered_messages
        if usage is None or usage.prompt_tokens <= 0 or covered <= 0 or len(messages) < covered:
            return estimate_messages_tokens(messages)
        extra = list(messages[covered:])
        known = usage.prompt_tokens
        if extra:
            # the first new message is usually the reply the usage already counted
            known += usage.completion_tokens
            extra = extra[1:] if extra[0].get("role") == "assistant" else extra
        return known + estimate_messages_tokens(extra)


__all__ = [
    "MESSAGE_OVERHEAD_TOKENS",
    "Usage",
    "UsageTracker",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_tokens",
]
