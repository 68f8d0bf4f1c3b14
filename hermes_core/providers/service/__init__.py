"""The frame of service (HTTP or CLI) memory providers: :class:`ServiceProvider` (lazy
client, availability, background recall with :class:`BackgroundRecall`, outbox sync,
health, shutdown, guarded tools), the shared settings fields (:func:`service_field`; the
others in :mod:`~hermes_core.providers.service.fields`), :class:`ServiceClient` (httpx with
timeouts, retries with backoff and jitter, a circuit breaker), the typed
:class:`ServiceError` family, :func:`setting_label` for messages that name the fix, and
:func:`screen_recalled` for recalled text a tool returns.

Importing this package does not import httpx; the client imports it on first use.
See docs/writing-a-provider.md, "Service providers".
"""

from __future__ import annotations

from hermes_core.providers.service.breaker import CircuitBreaker
from hermes_core.providers.service.client import (
    ServiceAPI,
    ServiceClient,
    given,
    parse_retry_after,
)
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
from hermes_core.providers.service.fields import service_field
from hermes_core.providers.service.provider import (
    BackgroundRecall,
    ServiceProvider,
    ToolRefused,
    compress_query,
    flagged,
    remembered,
    unflagged,
)
from hermes_core.providers.service.recall import screen_recalled, screen_text
from hermes_core.providers.service.settings import service_settings, setting_label

__all__ = [
    "BackgroundRecall",
    "CircuitBreaker",
    "ServiceAPI",
    "ServiceAuthError",
    "ServiceBadResponse",
    "ServiceClient",
    "ServiceError",
    "ServiceNotFound",
    "ServicePaused",
    "ServiceProvider",
    "ServiceRateLimited",
    "ServiceRequestError",
    "ServiceSettings",
    "ServiceUnavailable",
    "ToolRefused",
    "compress_query",
    "flagged",
    "given",
    "parse_retry_after",
    "remembered",
    "screen_recalled",
    "screen_text",
    "service_field",
    "service_settings",
    "setting_label",
    "unflagged",
]
