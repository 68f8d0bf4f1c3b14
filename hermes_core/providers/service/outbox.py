"""``Outbox``: writes a service could not take, kept in order and delivered later.

A provider's ``sync`` / ``on_memory_write`` runs on the host's background worker; when the
service is down (connection refused, timeout, 5xx, 429, or the circuit breaker paused it),
raising would drop the turn. Instead the provider hands each write to :meth:`Outbox.send`:

* earlier undelivered writes go first, in order (turn N before N+1);
* a write that fails with :class:`ServiceUnavailable` or :class:`ServiceRateLimited` is kept
  (under its ``key``: a write re-sent under the same key replaces the queued one) and the
  call returns normally; the first one of an outage logs one WARNING, delivery after it one
  INFO;
* any other error (a refused request, a wrong key, a malformed answer) propagates: retrying
  would not help.

Writes must be idempotent (a document id, an ``Idempotency-Key``): one may have reached the
service before its answer was lost. The outbox lives in memory and is bounded (``limit``;
the oldest write is dropped with a WARNING when full); :meth:`flush` tries once more (call it
at session end and shutdown) and :attr:`pending` says what is still undelivered.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable

from hermes_core.providers.service.errors import ServiceRateLimited, ServiceUnavailable

log = logging.getLogger("hermes_core.providers.service")

Write = Callable[[], object]


class Outbox:
    """In-order delivery of idempotent writes to one service (thread-safe)."""

    def __init__(self, service: str, *, limit: int = 500, logger: logging.Logger | None = None):
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self.service = service
        self.limit = limit
        self._log = logger or log
        self._queue: OrderedDict[str, Write] = OrderedDict()
        self._lock = threading.RLock()
        self._outage = False
        self.dropped = 0

    @property
    def pending(self) -> int:
        """Writes not delivered yet."""
        with self._lock:
            return len(self._queue)

    def send(self, key: str, write: Write) -> bool:
        """Deliver earlier writes, then ``write``. Returns True when everything was delivered,
        False when ``write`` (or an earlier one) is queued for later."""
        with self._lock:
            self._queue.pop(key, None)
            self._queue[key] = write
            if len(self._queue) > self.limit:
                oldest, _ = self._queue.popitem(last=False)
                self.dropped += 1
                self._log.warning(
                    "%s outbox full (%d writes): dropped the oldest (%s)",
                    self.service,
                    self.limit,
                    oldest,
                )
            return self._drain(key)

    def flush(self) -> bool:
        """Try to deliver everything queued; True when nothing is left."""
        with self._lock:
            return self._drain(None)

    def _drain(self, current: str | None) -> bool:
        """Deliver in order. A non-retryable error of ``current`` propagates; one of an
        earlier write drops that write (logged) and delivery goes on."""
        while self._queue:
            key, write = next(iter(self._queue.items()))
            try:
                write()
            except (ServiceUnavailable, ServiceRateLimited) as exc:
                if not self._outage:
                    self._outage = True
                    self._log.warning(
                        "%s is not taking writes (%s); keeping %d write(s) to deliver later",
                        self.service,
                        exc,
                        len(self._queue),
                    )
                return False
            except Exception as exc:
                self._queue.pop(key, None)
                if key == current:
                    raise
                self._log.warning("%s refused a queued write (%s): %s", self.service, key, exc)
                continue
            self._queue.pop(key, None)
        if self._outage:
            self._outage = False
            self._log.info("%s takes writes again; queued writes delivered", self.service)
        return True


__all__ = ["Outbox"]
