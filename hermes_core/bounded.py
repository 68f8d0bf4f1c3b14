"""Calls bounded by a timeout on daemon threads: THE helper for "answer within N seconds,
never wait on a stuck call twice" (the hook facade's provider calls, the MCP tool calls).

:meth:`BoundedCalls.run` starts ``fn`` on a daemon thread and waits up to ``timeout``. A call
that finishes gives ``(True, result)`` (its exception is re-raised in the caller). A call
still running gives ``(False, None)``: it keeps running in the background and its ``key``
counts as stuck (:meth:`BoundedCalls.is_stuck`) until it returns, so a caller can skip or
refuse the next call of that key instead of piling up threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class BoundedCalls:
    """Keyed bounded calls; threads are named ``<prefix>-<key>``. Thread-safe."""

    def __init__(self, thread_prefix: str) -> None:
        self._prefix = thread_prefix
        self._pending: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def is_stuck(self, key: str) -> bool:
        """True while an earlier call of ``key`` that ran over its timeout is still running."""
        with self._lock:
            thread = self._pending.get(key)
            if thread is not None and not thread.is_alive():
                del self._pending[key]
                return False
            return thread is not None

    def run(self, key: str, fn: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
        """``(finished, result)``; on timeout the call keeps running in the background and
        ``key`` counts as stuck until it returns. Exceptions propagate."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["result"] = fn()
            except BaseException as exc:
                box["error"] = exc

        thread = threading.Thread(target=target, name=f"{self._prefix}-{key}", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            with self._lock:
                self._pending[key] = thread
            return False, None
        if "error" in box:
            raise box["error"]
        return True, box.get("result")


__all__ = ["BoundedCalls"]
