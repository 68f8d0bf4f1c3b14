"""Errors of service (HTTP) providers. Each message says what happened and which setting or
environment variable fixes it; the structured fields let callers branch without parsing.

Hierarchy: :class:`ServiceError` (a :class:`~hermes_core.errors.PluginError`) >
:class:`ServiceAuthError` (401/403), :class:`ServiceNotFound` (404),
:class:`ServiceRequestError` (other 4xx: the request was wrong), :class:`ServiceRateLimited`
(429), :class:`ServiceUnavailable` (connect error, timeout, 5xx) > :class:`ServicePaused`
(the circuit breaker is open), :class:`ServiceBadResponse` (malformed JSON or shape).
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes_core.errors import PluginError


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    """What to tell the user when a service call fails: the service's display name and the
    settings (env var and/or config key) that hold its key and URL.

    ``key_setting`` / ``url_setting`` are shown verbatim, e.g.
    ``"HONCHO_API_KEY (memory.providers.honcho.api_key)"``; ``key_url`` is where to get a key.
    """

    service: str
    key_setting: str | None = None
    url_setting: str | None = None
    key_url: str | None = None
    setup_command: str | None = None

    def fix_key(self) -> str:
        parts: list[str] = []
        if self.key_setting:
            parts.append(f"check {self.key_setting}")
        if self.key_url:
            parts.append(f"get a key at {self.key_url}")
        if self.setup_command:
            parts.append(f"or run `{self.setup_command}`")
        return "; ".join(parts) if parts else "check the provider's API key"

    def fix_url(self) -> str:
        if self.url_setting:
            return f"check that the service runs and that {self.url_setting} points at it"
        return "check that the service runs and is reachable"


class ServiceError(PluginError):
    """A call to a memory service failed. ``counts`` says whether the circuit breaker
    counts it as a service failure (a wrong request or a missing record does not)."""

    counts: bool = True

    def __init__(
        self,
        message: str,
        *,
        service: str = "",
        method: str = "",
        path: str = "",
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.service = service
        self.method = method
        self.path = path
        self.status = status


class ServiceAuthError(ServiceError):
    """401/403: the key is missing, wrong or lacks permission."""


class ServiceNotFound(ServiceError):
    """404: the record or route does not exist (not a service failure)."""

    counts = False


class ServiceRequestError(ServiceError):
    """400/409/422 and other 4xx: the service refused the request as sent."""

    counts = False


class ServiceRateLimited(ServiceError):
    """429 after the retries ran out; ``retry_after`` is the server's hint in seconds."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        service: str = "",
        method: str = "",
        path: str = "",
        status: int | None = 429,
    ) -> None:
        super().__init__(message, service=service, method=method, path=path, status=status)
        self.retry_after = retry_after


class ServiceUnavailable(ServiceError):
    """The service could not be reached, timed out or answered 5xx."""


class ServicePaused(ServiceUnavailable):
    """The circuit breaker is open: no call was made. ``remaining`` seconds until a probe."""

    def __init__(
        self, message: str, *, remaining: float = 0.0, service: str = "", path: str = ""
    ) -> None:
        super().__init__(message, service=service, path=path)
        self.remaining = remaining


class ServiceBadResponse(ServiceError):
    """The service answered 2xx with a body that is not the JSON the API documents."""


__all__ = [
    "ServiceAuthError",
    "ServiceBadResponse",
    "ServiceError",
    "ServiceNotFound",
    "ServicePaused",
    "ServiceRateLimited",
    "ServiceRequestError",
    "ServiceSettings",
    "ServiceUnavailable",
]
