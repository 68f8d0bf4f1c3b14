"""The settings fields every service provider shares, as field factories.

A provider declares them where it wants them in its ``Settings`` (so setup prompts and its
README keep the provider's own order) and reads them through
:class:`~hermes_core.providers.service.provider.ServiceProvider`::

    timeout: float = timeout_field(10.0, le=300)
    prefetch_wait: float = prefetch_wait_field()
    retries: int = retries_field()
    failure_threshold: int = failure_threshold_field()
    breaker_cooldown: float = breaker_cooldown_field()

Every factory takes ``description=`` and any :func:`~hermes_core.providers.base.setup_field`
keyword (``env_var``, ``validation_alias``…); all are asked only by
``hermes memory setup --advanced``.
"""

from __future__ import annotations

from typing import Any

from hermes_core.providers.base import setup_field


def timeout_field(
    default: float = 10.0,
    *,
    le: float = 300,
    description: str = "Seconds one HTTP call may take.",
    **kwargs: Any,
) -> Any:
    """``timeout``: seconds one call may take (``ServiceClient(timeout=)``)."""
    return setup_field(default, description=description, setup="advanced", gt=0, le=le, **kwargs)


def prefetch_wait_field(
    default: float = 3.0,
    *,
    description: str = "Seconds automatic recall waits for the service.",
    **kwargs: Any,
) -> Any:
    """``prefetch_wait``: seconds ``prefetch`` waits for the background recall."""
    return setup_field(default, description=description, setup="advanced", gt=0, le=30, **kwargs)


def retries_field(
    *, description: str = "Retries (with backoff) of a failed idempotent call.", **kwargs: Any
) -> Any:
    """``retries``: retries of a failed idempotent call (``ServiceClient(retries=)``)."""
    return setup_field(2, description=description, setup="advanced", ge=0, le=10, **kwargs)


def failure_threshold_field(
    *,
    description: str = "Consecutive failures that pause the provider.",
    **kwargs: Any,
) -> Any:
    """``failure_threshold``: consecutive failures that open the circuit breaker."""
    return setup_field(5, description=description, setup="advanced", ge=1, le=100, **kwargs)


def breaker_cooldown_field(
    *,
    description: str = "Seconds the provider stays paused after the failures; then one call "
    "probes the service.",
    **kwargs: Any,
) -> Any:
    """``breaker_cooldown``: seconds the breaker stays open before one probe."""
    return setup_field(60.0, description=description, setup="advanced", ge=0, le=3600, **kwargs)


__all__ = [
    "breaker_cooldown_field",
    "failure_threshold_field",
    "prefetch_wait_field",
    "retries_field",
    "timeout_field",
]
