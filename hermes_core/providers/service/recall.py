"""The shared screening for text a service provider recalls into a tool result.

The host already screens what ``prefetch`` returns (``Session.before_turn``); tool results
are the provider's own business, so a service provider passes every recalled item through
:func:`screen_recalled` before it builds the JSON: ``<memory-context>`` fences are stripped,
and an item the threat scanner flags (context scope, the same rules the host applies to
prefetch) is dropped and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

log = logging.getLogger("hermes_core.providers.service")


def screen_text(text: str, source: str) -> str | None:
    """``text`` without memory-context fences, or None when the scanner flags it."""
    from hermes_core.context import sanitize_context
    from hermes_core.security.scan import scan

    clean, _ = sanitize_context(text)
    result = scan(clean, "context")
    if result.blocked:
        log.warning("dropped a recalled item from %s: %s", source, result.message)
        return None
    return clean


def screen_recalled(texts: Iterable[str], source: str) -> tuple[list[str], int]:
    """``(kept, dropped)``: each text screened by :func:`screen_text`, order kept."""
    kept: list[str] = []
    dropped = 0
    for text in texts:
        clean = screen_text(text, source)
        if clean is None:
            dropped += 1
        elif clean:
            kept.append(clean)
    return kept, dropped


__all__ = ["screen_recalled", "screen_text"]
