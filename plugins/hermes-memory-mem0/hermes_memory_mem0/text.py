"""Text helpers: capping a message at a sentence boundary (English and Chinese)."""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"[.!?。！？；;…\n](?:[\"'”’)）\]]*)")


def cap_at_sentence(text: str, max_chars: int) -> str:
    """``text`` if it fits, else its longest prefix within ``max_chars`` that ends at a
    sentence boundary (``. ! ? 。 ！ ？ ; …`` or a newline, with closing quotes); with no
    boundary in range, a hard cut at ``max_chars``. Whitespace is trimmed."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    window = text[:max_chars]
    end = 0
    for match in _BOUNDARY.finditer(window):
        end = match.end()
    if end == 0:
        return window.rstrip()
    return window[:end].strip()


__all__ = ["cap_at_sentence"]
