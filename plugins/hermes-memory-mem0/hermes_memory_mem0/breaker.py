"""A circuit breaker: after ``threshold`` consecutive service failures, pause calls for
``cooldown`` seconds ("Mem0 temporarily unavailable") instead of stalling every turn.

Not-found and validation errors (:class:`Mem0NotFound`, :class:`Mem0Invalid`) are the
caller's fault, not the service's: they pass through without counting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from hermes_memory_mem0.backend import Mem0Error, Mem0Invalid, Mem0NotFound, Mem0Unavailable

T = TypeVar("T")

UNAVAILABLE = "Mem0 temporarily unavailable"


class CircuitBreaker:
    """Counts consecutive failures of :meth:`call`; thread-safe. ``clock`` is injectable."""

    def __init__(
        self,
        threshold: int = 5,
        cooldown: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until = 0.0

    @property
    def failures(self) -> int:
        """Consecutive counted failures so far."""
        return self._failures

    def remaining(self) -> float:
        """Seconds until calls resume (0 when closed)."""
        with self._lock:
            return max(0.0, self._open_until - self._clock())

    def is_open(self) -> bool:
        return self.remaining() > 0

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` unless paused. Raises :class:`Mem0Unavailable` while open; re-raises
        what ``fn`` raised after counting it."""
        wait = self.remaining()
        if wait > 0:
            raise Mem0Unavailable(
                f"{UNAVAILABLE} (paused after {self.threshold} consecutive failures; "
                f"retrying in {int(wait) + 1} s)"
            )
        try:
            result = fn()
        except (Mem0NotFound, Mem0Invalid):
            raise
        except Exception as exc:
            with self._lock:
                self._failures += 1
                if self._failures >= self.threshold:
                    self._open_until = self._clock() + self.cooldown
                    self._failures = 0
            if isinstance(exc, Mem0Error):
                raise
            raise Mem0Error(f"{type(exc).__name__}: {exc}") from exc
        with self._lock:
            self._failures = 0
        return result


__all__ = ["UNAVAILABLE", "CircuitBreaker"]
