"""Sanitise values before they are stored: a turn is stored whole, never refused for its shape.

* Text: lone surrogates (tool output decoded with ``surrogateescape``) and undecodable bytes
  become U+FFFD; a valid surrogate pair written as two code points becomes its character.
* Structures (``tool_calls``, dict/list ``content``): the same, deeply; non-finite floats
  become ``null``; anything JSON cannot hold becomes its ``str``.
* Integers: clamped into the range SQLite stores (and a sensible floor).
* Timestamps: NaN, ±inf, non-numbers and values outside year 1970–3000 become "now".
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from typing import Any

INT_MAX = 2**63 - 1
TIMESTAMP_MAX = 32_503_680_000.0  # 3000-01-01
MAX_DEPTH = 64

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(value: str) -> str:
    """``value`` with every lone surrogate replaced by U+FFFD (pairs joined)."""
    if not _SURROGATE.search(value):
        return value
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def as_text(value: Any) -> str:
    """Any value as storable text: strings cleaned, bytes decoded (bad bytes → U+FFFD),
    other values as JSON (or ``str``)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    if value is None:
        return ""
    return json_text(value)


def optional_text(value: Any) -> str | None:
    """``None`` stays ``None``; anything else becomes text (:func:`as_text`)."""
    return None if value is None else as_text(value)


def clean_value(value: Any, depth: int = 0) -> Any:
    """A JSON-safe deep copy of ``value`` (see the module docstring)."""
    if depth > MAX_DEPTH:
        return as_text(str(value))
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes | bytearray | memoryview):
        return as_text(value)
    if isinstance(value, Mapping):
        return {as_text(k): clean_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [clean_value(v, depth + 1) for v in value]
    return clean_text(str(value))


def json_text(value: Any) -> str:
    """``value`` as JSON text (non-ASCII kept), never raising."""
    try:
        return json.dumps(clean_value(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return clean_text(str(value))


def clamp_int(value: Any, lo: int = 0, hi: int = INT_MAX) -> int | None:
    """An integer in ``[lo, hi]``; ``None`` for non-numbers, bools and NaN."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return hi if value > 0 else lo
        value = int(value)
    if not isinstance(value, int):
        return None
    return max(lo, min(hi, value))


def clean_timestamp(value: Any, default: float | None = None) -> float:
    """A finite epoch timestamp; anything else (NaN, inf, text, out of range) → ``default``
    or now."""
    fallback = time.time() if default is None else default
    if isinstance(value, bool) or not isinstance(value, int | float):
        return fallback
    try:
        number = float(value)
    except OverflowError:
        return fallback
    if not math.isfinite(number) or not 0.0 <= number <= TIMESTAMP_MAX:
        return fallback
    return number


__all__ = [
    "INT_MAX",
    "as_text",
    "clamp_int",
    "clean_text",
    "clean_timestamp",
    "clean_value",
    "json_text",
    "optional_text",
]
