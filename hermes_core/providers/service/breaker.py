"""A thread-safe circuit breaker for service providers.

``threshold`` consecutive counted failures open the breaker: calls fail fast with
:class:`~hermes_core.providers.service.errors.ServicePaused` for ``cooldown`` seconds instead
of stalling every turn. After the cooldown ONE caller is let through as a probe (half-open);
its success closes the breaker, its failure re-opens it for another cooldown. Opening logs one
WARNING, closing one INFO; a failed probe logs at DEBUG, so a long outage is two lines in the
log, not one per turn. ``clock`` is injectable for tests.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Literal, TypeVar

from hermes_core.providers.service.errors import ServiceError, ServicePaused

State = Literal["closed", "open", "half-open"]
T = TypeVar("T")

log = logging.getLogger("hermes_core.providers.service")


class CircuitBreaker:
    """Counts consecutive failures reported through :meth:`record_failure`.

    Use: :meth:`call` around one call (an HTTP request, a CLI run, an in-process library
    call), or by hand ``breaker.before_call()`` (raises ``ServicePaused`` while open), then
    ``record_success()`` or ``record_failure(reason)``.
    """

    def __init__(
        self,
        service: str,
        *,
        threshold: int = 5,
        cooldown: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        logger: logging.Logger | None = None,
    ) -> None:
        if threshold < 1:
            raise ValueError("threshold must be >= 1")
        if cooldown < 0:
            raise ValueError("cooldown must be >= 0")
        self.service = service
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._log = logger or log
        self._lock = threading.Lock()
        self._failures = 0
        self._state: State = "closed"
        self._open_until = 0.0
        self._probing = False
        self._last_reason = ""

    @property
    def state(self) -> State:
        """``closed``, ``open`` or ``half-open`` (cooldown over, probe allowed or running)."""
        with self._lock:
            return self._current_state()

    @property
    def failures(self) -> int:
        """Consecutive counted failures since the last success."""
        with self._lock:
            return self._failures

    def remaining(self) -> float:
        """Seconds until a probe is allowed (0 unless open)."""
        with self._lock:
            if self._state != "open":
                return 0.0
            return max(0.0, self._open_until - self._clock())

    def _current_state(self) -> State:
        if self._state == "open" and self._clock() >= self._open_until:
            return "half-open"
        return self._state

    def before_call(self) -> None:
        """Let a call through, or raise :class:`ServicePaused`. While half-open exactly one
        caller (the probe) passes until it reports back."""
        with self._lock:
            state = self._current_state()
            if state == "closed":
                return
            if state == "half-open" and not self._probing:
                self._state = "half-open"
                self._probing = True
                return
            wait = max(0.0, self._open_until - self._clock())
        raise ServicePaused(
            f"{self.service} is paused after {self.threshold} consecutive failures "
            f"({self._last_reason}); next attempt in {wait:.0f} s",
            remaining=wait,
            service=self.service,
        )

    def record_success(self) -> None:
        with self._lock:
            was = self._state
            self._failures = 0
            self._state = "closed"
            self._probing = False
        if was != "closed":
            self._log.info("%s is reachable again; circuit breaker closed", self.service)

    def record_failure(self, reason: str = "") -> None:
        with self._lock:
            self._failures += 1
            self._last_reason = reason or self._last_reason or "service error"
            if self._state == "half-open":
                self._state = "open"
                self._probing = False
                self._open_until = self._clock() + self.cooldown
                self._log.debug("%s probe failed (%s); paused again", self.service, reason)
                return
            if self._state == "closed" and self._failures >= self.threshold:
                self._state = "open"
                self._open_until = self._clock() + self.cooldown
                opened = True
            else:
                opened = False
        if opened:
            self._log.warning(
                "%s failed %d times in a row (last: %s); circuit breaker open, pausing calls "
                "for %.0f s",
                self.service,
                self.threshold,
                reason or "service error",
                self.cooldown,
            )

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` unless paused (:class:`ServicePaused`). A :class:`ServiceError` that
        ``counts`` is recorded as a failure, one that does not (not found, a refused
        request) as a success; anything else raised (not a service verdict) frees the probe.
        What ``fn`` raised is re-raised."""
        self.before_call()
        try:
            result = fn()
        except ServiceError as exc:
            if exc.counts:
                text = str(exc)
                self.record_failure(text if len(text) <= 160 else text[:157] + "...")
            else:
                self.record_success()
            raise
        except BaseException:
            self.release_probe()
            raise
        self.record_success()
        return result

    def release_probe(self) -> None:
        """A probe ended without a verdict (e.g. a not-found answer): allow another probe."""
        with self._lock:
            self._probing = False

    def reset(self) -> None:
        """Close without logging (tests, or a settings change)."""
        with self._lock:
            self._failures = 0
            self._state = "closed"
            self._probing = False


__all__ = ["CircuitBreaker", "State"]
