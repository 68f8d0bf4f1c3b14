"""Retry timing shared by the HTTP clients (:mod:`hermes_core.llm.client`,
:mod:`hermes_core.providers.service.client`): THE ``Retry-After`` parser and backoff rule.

* :func:`parse_retry_after` reads a ``Retry-After`` header (delta-seconds or HTTP date) as
  seconds, never negative; ``None`` when absent or unparseable.
* :func:`backoff_wait` is the wait before retry ``attempt`` (0 for the first): the server's
  ``Retry-After`` capped at ``max_retry_after`` when given, else exponential backoff with
  equal jitter: ``b = min(backoff_max, backoff_base * 2**attempt)``, wait
  ``b/2 + uniform(0, b/2)``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime


def parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date); None if absent or
    unparseable; never negative."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now())


def backoff_wait(
    attempt: int,
    retry_after: float | None,
    *,
    backoff_base: float,
    backoff_max: float,
    max_retry_after: float,
    uniform: Callable[[float, float], float] = random.uniform,
) -> float:
    """Seconds to wait before retry ``attempt`` (see the module docstring)."""
    if retry_after is not None:
        return min(retry_after, max_retry_after)
    ceiling = min(backoff_max, backoff_base * float(2**attempt))
    return float(ceiling / 2 + uniform(0, ceiling / 2))


__all__ = ["backoff_wait", "parse_retry_after"]
