"""Shared parts of service (HTTP) memory providers: :class:`ServiceClient` (httpx with
timeouts, retries with backoff and jitter, a circuit breaker), the typed
:class:`ServiceError` family, :func:`setting_label` for messages that name the fix, and
:func:`screen_recalled` for recalled text a tool returns.

Importing this package does not import httpx; the client imports it on first use.
See docs/writing-a-provider.md, "Service providers".
"""

from __future__ import annotations

from hermes_core.providers.service.breaker import CircuitBreaker
from hermes_core.providers.service.client import ServiceClient, parse_retry_after
from hermes_core.providers.service.errors import (
    ServiceAuthError,
    ServiceBadResponse,
    ServiceError,
    ServiceNotFound,
    ServicePaused,
    ServiceRateLimited,
    ServiceRequestError,
    ServiceSettings,
    ServiceUnavailable,
)
from hermes_core.providers.service.recall import screen_recalled, screen_text
from hermes_core.providers.service.settings import service_settings, setting_label

__all__ = [
    "CircuitBreaker",
    "ServiceAuthError",
    "ServiceBadResponse",
    "ServiceClient",
    "ServiceError",
    "ServiceNotFound",
    "ServicePaused",
    "ServiceRateLimited",
    "ServiceRequestError",
    "ServiceSettings",
    "ServiceUnavailable",
    "parse_retry_after",
    "screen_recalled",
    "screen_text",
    "service_settings",
    "setting_label",
]
