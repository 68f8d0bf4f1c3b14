"""What the external memory provider is doing right now, for a UI that waits on it.

The hook facade wraps every provider call it makes (recall, the background sync, session end,
shutdown…) in :func:`track`; a UI polls :func:`describe` while it waits (``hermes-memory chat``'s
spinner reads ``mem0: saving the last turn (3 s)``). A provider may refine the text of the
call it is in with :func:`note`, e.g. to say that it is waiting on a model call. Process-wide
and thread-safe; nothing here ever raises into a hook.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

VERBS: dict[str, str] = {
    "prefetch": "recalling",
    "sync": "saving the last turn",
    "on_memory_write": "saving a memory write",
    "on_session_end": "closing the session",
    "on_pre_compress": "saving what the compaction drops",
    "on_context_loss": "saving what the compaction drops",
    "shutdown": "shutting down",
    "warm_up": "loading",
    "on_turn_start": "starting the turn",
    "on_turn_end": "ending the turn",
}
"""Hook name → what the user reads; other hooks show as their own name."""


@dataclass
class _Entry:
    provider: str
    hook: str
    started: float
    thread: int
    detail: str = ""


_lock = threading.Lock()
_running: dict[int, _Entry] = {}
_ids = itertools.count()


@contextmanager
def track(provider: str, hook: str) -> Iterator[None]:
    """Record that ``provider`` runs ``hook`` on this thread until the block ends
    (a plugin name such as ``memory-provider:mem0`` is shown as ``mem0``)."""
    key = next(_ids)
    entry = _Entry(provider.rpartition(":")[2], hook, time.monotonic(), threading.get_ident())
    with _lock:
        _running[key] = entry
    try:
        yield
    finally:
        with _lock:
            _running.pop(key, None)


def tracked(provider: str, hook: str, call: Callable[[], T]) -> Callable[[], T]:
    """``call`` wrapped in :func:`track` (for calls run on another thread)."""

    def run() -> T:
        with track(provider, hook):
            return call()

    return run


def note(text: str) -> None:
    """Replace the text shown for the provider call running on this thread (no-op outside
    one), e.g. ``note("summarising the session (one model call)")``."""
    ident = threading.get_ident()
    with _lock:
        for entry in _running.values():
            if entry.thread == ident:
                entry.detail = " ".join(text.split())[:120]


def describe(now: float | None = None) -> str:
    """``"mem0: saving the last turn (3 s)"`` for each provider call running, oldest first,
    joined by ``"; "``; ``""`` when none."""
    now = time.monotonic() if now is None else now
    with _lock:
        entries = sorted(_running.values(), key=lambda e: e.started)
    parts = []
    for entry in entries:
        what = entry.detail or VERBS.get(entry.hook, entry.hook)
        parts.append(f"{entry.provider}: {what} ({int(now - entry.started)} s)")
    return "; ".join(parts)


def running() -> list[dict[str, Any]]:
    """The calls running now, oldest first: ``provider``, ``hook``, ``what``, ``seconds``."""
    now = time.monotonic()
    with _lock:
        entries = sorted(_running.values(), key=lambda e: e.started)
    return [
        {
            "provider": e.provider,
            "hook": e.hook,
            "what": e.detail or VERBS.get(e.hook, e.hook),
            "seconds": round(now - e.started, 1),
        }
        for e in entries
    ]


__all__ = ["VERBS", "describe", "note", "running", "track", "tracked"]
