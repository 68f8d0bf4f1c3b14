"""``ServiceClient``: JSON over HTTP for service memory providers (httpx, imported lazily).

One client per provider instance, shared by its threads (httpx.Client is thread-safe). Each
call:

1. asks the :class:`~hermes_core.providers.service.breaker.CircuitBreaker` (open → raises
   :class:`ServicePaused` at once, no network);
2. sends the request with the per-call ``timeout`` (connect, read, write, pool all bounded),
   never running past the optional ``deadline`` (seconds for the whole call, retries and
   waits included — give prefetch its budget here);
3. retries up to ``retries`` times with exponential backoff and equal jitter
   (``b = min(backoff_max, backoff_base * 2**attempt)``, wait ``b/2 + uniform(0, b/2)``) on
   connect errors and 429 always, and on read timeouts, dropped connections and 502/503/504
   when the call is ``idempotent`` (GET/PUT/DELETE by default; pass ``idempotent=True`` for
   a search sent as POST). A ``Retry-After`` header sets the wait; a wait longer than
   ``max_retry_after`` (or past the deadline) ends the retries;
4. maps the outcome: 2xx → parsed JSON (``None`` for an empty body), else a typed
   :class:`ServiceError` whose message names the setting to fix; the breaker counts
   auth errors, 429, 5xx, transport errors and malformed JSON, not 404/4xx request errors.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from hermes_core.providers.service.breaker import CircuitBreaker
from hermes_core.providers.service.errors import (
    ServiceAuthError,
    ServiceBadResponse,
    ServiceError,
    ServiceNotFound,
    ServiceRateLimited,
    ServiceRequestError,
    ServiceSettings,
    ServiceUnavailable,
)
from hermes_core.retry import backoff_wait, parse_retry_after
from hermes_core.security.redaction import redact_text

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("hermes_core.providers.service")

_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_RETRY_STATUS = frozenset({502, 503, 504})
_USER_AGENT = "hermes-core-service-client/1"


def _secret(value: str | SecretStr | None) -> str | None:
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    return value or None


class ServiceClient:
    """A typed JSON client for one memory service.

    ``api_key`` is sent as ``{auth_header}: {auth_scheme} {key}`` (scheme ``""`` sends the
    bare key, e.g. ``X-API-Key``); ``headers`` are added to every request. ``settings``
    supplies the names used in error messages. ``transport`` is for tests only.
    """

    def __init__(
        self,
        base_url: str,
        *,
        settings: ServiceSettings,
        api_key: str | SecretStr | None = None,
        auth_header: str = "Authorization",
        auth_scheme: str = "Bearer",
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        connect_timeout: float | None = None,
        retries: int = 2,
        backoff_base: float = 0.25,
        backoff_max: float = 4.0,
        max_retry_after: float = 10.0,
        breaker: CircuitBreaker | None = None,
        failure_threshold: int = 5,
        cooldown: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ServiceRequestError(
                f"{settings.service}: base URL {redact_text(base_url)!r} must start with "
                f"http:// or https://; {settings.fix_url()}",
                service=settings.service,
            )
        self.base_url = base_url.rstrip("/")
        self.shown_url = redact_text(self.base_url)  # for messages: no password in it
        self.settings = settings
        self.service = settings.service
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.retries = max(0, retries)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.breaker = breaker or CircuitBreaker(
            settings.service, threshold=failure_threshold, cooldown=cooldown
        )
        self._sleep = sleep
        self._headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        self._headers.update(headers or {})
        key = _secret(api_key)
        if key:
            self._headers[auth_header] = f"{auth_scheme} {key}".strip()
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:  # never shows the key
        return f"<ServiceClient {self.service} {self.shown_url} breaker={self.breaker.state}>"

    # -- lifecycle

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._closed:
                raise ServiceUnavailable(f"{self.service} client is closed", service=self.service)
            if self._client is None:
                import httpx

                self._client = httpx.Client(
                    base_url=self.base_url,
                    headers=self._headers,
                    transport=self._transport,
                    follow_redirects=False,
                )
            return self._client

    def close(self) -> None:
        """Close connections; idempotent. Later calls raise :class:`ServiceUnavailable`."""
        with self._lock:
            client, self._client, self._closed = self._client, None, True
        if client is not None:
            client.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- calls

    def get(self, path: str, **kw: Any) -> Any:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> Any:
        return self.request("POST", path, **kw)

    def put(self, path: str, **kw: Any) -> Any:
        return self.request("PUT", path, **kw)

    def patch(self, path: str, **kw: Any) -> Any:
        return self.request("PATCH", path, **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self.request("DELETE", path, **kw)

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
        retries: int | None = None,
        idempotent: bool | None = None,
    ) -> Any:
        """Send one call (with retries); returns the parsed JSON body or None when empty.

        Raises a :class:`ServiceError` subclass; never anything else for service or
        transport trouble.
        """
        method = method.upper()
        return self.breaker.call(
            lambda: self._send(
                method,
                path,
                json_body=json_body,
                params=params,
                headers=headers,
                timeout=self.timeout if timeout is None else timeout,
                deadline=deadline,
                retries=self.retries if retries is None else max(0, retries),
                idempotent=(method in _IDEMPOTENT) if idempotent is None else idempotent,
            )
        )

    def _send(
        self,
        method: str,
        path: str,
        *,
        json_body: Any,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
        timeout: float,
        deadline: float | None,
        retries: int,
        idempotent: bool,
    ) -> Any:
        import httpx

        client = self._http()
        started = time.monotonic()
        attempt = 0
        while True:
            budget = timeout
            if deadline is not None:
                budget = min(budget, deadline - (time.monotonic() - started))
                if budget <= 0:
                    raise self._unavailable(method, path, f"no answer within {deadline:g} s")
            connect = budget if self.connect_timeout is None else min(budget, self.connect_timeout)
            retry_after: float | None = None
            try:
                response = client.request(
                    method,
                    path,
                    json=json_body,
                    params=_clean_params(params),
                    headers=headers,
                    timeout=httpx.Timeout(budget, connect=connect),
                )
            except httpx.ConnectError as exc:
                failure: ServiceError = self._unavailable(method, path, f"cannot connect ({exc})")
                retryable = True
            except httpx.ConnectTimeout:
                failure = self._unavailable(method, path, f"connect timed out after {connect:g} s")
                retryable = True
            except httpx.TimeoutException:
                failure = self._unavailable(method, path, f"no answer within {budget:g} s")
                retryable = idempotent
            except httpx.TransportError as exc:
                failure = self._unavailable(
                    method, path, f"connection failed ({type(exc).__name__}: {exc})"
                )
                retryable = idempotent
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return self._json(response, method, path)
                failure = self._status_error(response, method, path)
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                retryable = status == 429 or (status in _RETRY_STATUS and idempotent)
            if not retryable or attempt >= retries:
                raise failure
            wait = self._backoff(attempt, retry_after)
            if retry_after is not None and retry_after > self.max_retry_after:
                raise failure
            if deadline is not None and time.monotonic() - started + wait >= deadline:
                raise failure
            log.debug(
                "%s %s %s failed (%s); retry %d in %.2f s",
                self.service,
                method,
                path,
                _short(failure),
                attempt + 1,
                wait,
            )
            self._sleep(wait)
            attempt += 1

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        return backoff_wait(
            attempt,
            retry_after,
            backoff_base=self.backoff_base,
            backoff_max=self.backoff_max,
            max_retry_after=self.max_retry_after,
        )

    # -- mapping

    def _json(self, response: httpx.Response, method: str, path: str) -> Any:
        if not response.content or response.status_code == 204:
            return None
        try:
            return json.loads(response.content)
        except (ValueError, UnicodeDecodeError) as exc:
            preview = response.content[:80].decode("utf-8", "replace")
            raise ServiceBadResponse(
                f"{self.service} answered {method} {path} with malformed JSON ({exc}; body "
                f"starts {preview!r}); {self.settings.fix_url()} (is it really "
                f"{self.service}?)",
                service=self.service,
                method=method,
                path=path,
                status=response.status_code,
            ) from exc

    def _unavailable(self, method: str, path: str, what: str) -> ServiceUnavailable:
        return ServiceUnavailable(
            f"{self.service} at {self.shown_url} is unavailable: {method} {path}: {what}; "
            f"{self.settings.fix_url()}",
            service=self.service,
            method=method,
            path=path,
        )

    def _status_error(self, response: httpx.Response, method: str, path: str) -> ServiceError:
        status = response.status_code
        detail = _error_detail(response)
        where = f"{method} {path}"
        common: dict[str, Any] = {
            "service": self.service,
            "method": method,
            "path": path,
            "status": status,
        }
        if status in (401, 403):
            what = "rejected the API key" if status == 401 else "refused access with this key"
            return ServiceAuthError(
                f"{self.service} {what} (HTTP {status} on {where}{detail}); "
                f"{self.settings.fix_key()}",
                **common,
            )
        if status == 404:
            return ServiceNotFound(
                f"{self.service}: not found (HTTP 404 on {where}{detail})", **common
            )
        if status == 429:
            retry = parse_retry_after(response.headers.get("retry-after"))
            hint = f"; retry after {retry:.0f} s" if retry is not None else ""
            return ServiceRateLimited(
                f"{self.service} is rate limiting this key (HTTP 429 on {where}{detail}){hint}",
                retry_after=retry,
                service=self.service,
                method=method,
                path=path,
            )
        if status >= 500:
            return ServiceUnavailable(
                f"{self.service} at {self.shown_url} failed: HTTP {status} on {where}{detail}; "
                f"{self.settings.fix_url()}",
                **common,
            )
        return ServiceRequestError(
            f"{self.service} refused {where}: HTTP {status}{detail}", **common
        )


def _clean_params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if params is None:
        return None
    return {key: value for key, value in params.items() if value is not None}


def _error_detail(response: httpx.Response) -> str:
    """`` — <server message>`` (first 200 chars), from a JSON error body or the text."""
    text = ""
    try:
        body = response.json()
    except ValueError:
        text = response.text
    else:
        if isinstance(body, Mapping):
            for key in ("detail", "message", "error", "msg"):
                value = body.get(key)
                if isinstance(value, Mapping):
                    value = value.get("message", value)
                if value:
                    text = value if isinstance(value, str) else json.dumps(value)
                    break
    text = " ".join(text.split())[:200]
    return f" — {text}" if text else ""


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 160 else text[:157] + "..."


def given(**values: Any) -> dict[str, Any]:
    """The ``values`` that are set (truthy: not None, ``""``, ``0`` or empty), in order: the
    optional fields of a request body, ``{"query": q, **given(session_id=sid)}``."""
    return {key: value for key, value in values.items() if value}


class ServiceAPI:
    """Base of a plugin's typed API wrapper: every call goes through :attr:`client` (the
    provider's :class:`ServiceClient`, with its timeouts, retries and breaker). Name the
    subclass in :attr:`ServiceProvider.api_class
    <hermes_core.providers.service.provider.ServiceProvider.api_class>`."""

    def __init__(self, client: ServiceClient) -> None:
        self.client = client


__all__ = ["ServiceAPI", "ServiceClient", "given", "parse_retry_after"]
