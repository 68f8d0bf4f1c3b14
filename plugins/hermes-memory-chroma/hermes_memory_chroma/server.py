"""Chroma as a server: the HTTP client of ``mode: server`` and its failure handling.

:func:`connect` returns a chromadb ``HttpClient`` for ``settings.url`` (tenant and database
from the settings; a missing database is created) whose every HTTP call goes through
:class:`GuardedTransport`:

- a per-call timeout (``settings.timeout``; chromadb's own client waits forever);
- the token, when set, as ``Authorization: Bearer <token>`` and ``X-Chroma-Token: <token>``
  (what chroma's token auth and the proxies documented for chroma 1.x check);
- failures become the typed service errors of hermes-core, each naming its fix:
  unreachable / timed out / 502-504 → :class:`ServiceUnavailable`, 401/403 →
  :class:`ServiceAuthError`;
- a :class:`CircuitBreaker`: after a few consecutive failures calls fail fast with
  :class:`ServicePaused` for a cooldown instead of stalling every turn.

The host contains these errors: a failing ``prefetch`` is skipped, logged and counted
(``hermes-memory memory status``), a failing ``sync`` is logged, a tool returns the message. So a
turn never crashes on a down server. :func:`probe` is what ``hermes-memory doctor`` reports.

chromadb is imported inside the functions (``hermes-memory memory status`` imports this package's
provider module and must stay fast).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hermes_core.providers.service import (
    CircuitBreaker,
    ServiceAuthError,
    ServiceError,
    ServiceUnavailable,
)
from hermes_core.providers.service.settings import setting_label

from hermes_memory_chroma.settings import ChromaSettings

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

SERVICE = "chroma server"
API_PREFIX = "/api/v2"
BREAKER_THRESHOLD = 3
"""Consecutive failed calls that pause the server for :data:`BREAKER_COOLDOWN` seconds."""
BREAKER_COOLDOWN = 30.0


@dataclass(frozen=True, slots=True)
class ServerTarget:
    """Where and how to reach the server, from :class:`ChromaSettings`."""

    url: str
    token: str | None
    tenant: str
    database: str
    timeout: float

    @classmethod
    def from_settings(cls, settings: ChromaSettings) -> ServerTarget:
        token = settings.token.get_secret_value() if settings.token is not None else None
        return cls(
            url=settings.url.rstrip("/"),
            token=token or None,
            tenant=settings.tenant,
            database=settings.database,
            timeout=float(settings.timeout),
        )

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        parts = urlsplit(self.url)
        return parts.port or (443 if parts.scheme == "https" else 80)

    def headers(self) -> dict[str, str]:
        if not self.token:
            return {}
        return {"Authorization": f"Bearer {self.token}", "X-Chroma-Token": self.token}

    def start_hint(self) -> str:
        """The command that starts a local server at this URL."""
        return f"chroma run --path <data dir> --host {self.host} --port {self.port}"


def _url_label() -> str:
    return setting_label(ChromaSettings, "chroma", "url")


def _token_label() -> str:
    return setting_label(ChromaSettings, "chroma", "token")


def fix_unreachable(target: ServerTarget) -> str:
    return (
        f"start it (`{target.start_hint()}`) or point {_url_label()} at a running one "
        "(`hermes-memory memory setup chroma`)"
    )


def fix_token() -> str:
    return (
        f"set the token the server expects in {_token_label()} (kept in $HERMES_HOME/.env; "
        "`hermes-memory memory setup chroma` asks for it)"
    )


def fix_for(exc: BaseException, target: ServerTarget) -> str:
    """The fix to show for an error of :func:`probe` or :func:`connect`."""
    if isinstance(exc, ServiceAuthError):
        return fix_token()
    if isinstance(exc, ServiceUnavailable):
        return fix_unreachable(target)
    return str(exc)


def unreachable(target: ServerTarget, why: str) -> ServiceUnavailable:
    """The error of a server that does not answer, naming both fixes."""
    return ServiceUnavailable(
        f"the chroma server at {target.url} is unreachable ({why}): {fix_unreachable(target)}",
        service=SERVICE,
    )


def refused(target: ServerTarget, status: int, path: str) -> ServiceAuthError:
    """The error of a server (or its proxy) that refused the token."""
    given = "the token given was refused" if target.token else "no token was given"
    return ServiceAuthError(
        f"the chroma server at {target.url} answered {status} ({given}): {fix_token()}",
        service=SERVICE,
        path=path,
        status=status,
    )


def make_transport(target: ServerTarget, breaker: CircuitBreaker) -> httpx.BaseTransport:
    """An httpx transport that adds the token, applies the breaker and turns transport
    failures, 401/403 and 502-504 into typed service errors (other answers, a chroma error
    included, go back to chromadb, which raises them with the server's message)."""
    import httpx

    class GuardedTransport(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            for name, value in target.headers().items():
                request.headers[name] = value
            breaker.before_call()
            path = request.url.path
            try:
                response: httpx.Response = super().handle_request(request)
            except httpx.TimeoutException as exc:
                breaker.record_failure("timed out")
                raise unreachable(
                    target, f"no answer within {target.timeout:g} s to {path}"
                ) from exc
            except httpx.TransportError as exc:
                breaker.record_failure(type(exc).__name__)
                raise unreachable(target, f"{type(exc).__name__}: {exc}") from exc
            status = response.status_code
            if status in (401, 403):
                response.close()
                breaker.record_failure(f"HTTP {status}")
                raise refused(target, status, path)
            if status in (502, 503, 504):  # a proxy in front of a server that is down
                body = _body(response)
                breaker.record_failure(f"HTTP {status}")
                raise unreachable(target, f"HTTP {status} from {path}: {body}")
            breaker.record_success()
            return response

    return GuardedTransport()


def _body(response: httpx.Response) -> str:
    try:
        text = response.read().decode("utf-8", "replace")
    except Exception:
        return ""
    finally:
        response.close()
    return text[:300]


def new_breaker() -> CircuitBreaker:
    return CircuitBreaker(SERVICE, threshold=BREAKER_THRESHOLD, cooldown=BREAKER_COOLDOWN)


def _session(target: ServerTarget, breaker: CircuitBreaker, headers: Any = None) -> httpx.Client:
    import httpx

    return httpx.Client(
        transport=make_transport(target, breaker),
        timeout=httpx.Timeout(target.timeout),
        headers=headers,
    )


def probe(target: ServerTarget, breaker: CircuitBreaker | None = None) -> str:
    """Check that ``target`` is a chroma server that accepts the token: the heartbeat, the
    version, then the tenant (a call that needs authentication). Returns the server's
    version; raises a :class:`ServiceError` naming the fix otherwise."""
    import httpx

    base = target.url + API_PREFIX
    with _session(target, breaker or new_breaker()) as session:
        beat = session.get(base + "/heartbeat")
        if beat.status_code != 200 or "heartbeat" not in beat.text:
            raise ServiceError(
                f"{target.url} is not a chroma server (GET {API_PREFIX}/heartbeat answered "
                f"{beat.status_code}): point {_url_label()} at a `chroma run` server",
                service=SERVICE,
                status=beat.status_code,
            )
        version = session.get(base + "/version")
        found = str(version.json()) if version.status_code == 200 else "?"
        tenant = session.get(f"{base}/tenants/{target.tenant}")
        if tenant.status_code == 404:
            raise ServiceError(
                f"the chroma server at {target.url} has no tenant {target.tenant!r}: create it "
                f"or fix {setting_label(ChromaSettings, 'chroma', 'tenant')}",
                service=SERVICE,
                status=404,
            )
        try:
            tenant.raise_for_status()
        except httpx.HTTPStatusError as exc:
            raise ServiceError(
                f"the chroma server at {target.url} refused GET {exc.request.url.path} "
                f"({tenant.status_code}: {tenant.text[:200]})",
                service=SERVICE,
                status=tenant.status_code,
            ) from exc
        return found


def connect(target: ServerTarget, breaker: CircuitBreaker) -> Any:
    """A chromadb ``HttpClient`` on ``target`` (telemetry off) whose HTTP calls go through
    the guarded transport; creates the database when it is missing. Raises the typed
    service errors above when the server is down or refuses the token."""
    import chromadb
    from chromadb.config import Settings as ChromaClientSettings

    probe(target, breaker)
    _ensure_database(target, breaker)
    settings = ChromaClientSettings(anonymized_telemetry=False, allow_reset=False)
    try:
        client = chromadb.HttpClient(
            host=target.url,
            port=target.port,
            headers=target.headers(),  # the construction's own calls need the token too
            settings=settings,
            tenant=target.tenant,
            database=target.database,
        )
    except ServiceError:
        raise
    except Exception as exc:
        breaker.record_failure(type(exc).__name__)
        raise unreachable(target, f"{type(exc).__name__}: {exc}") from exc
    _guard(client, target, breaker)
    return client


def _ensure_database(target: ServerTarget, breaker: CircuitBreaker) -> None:
    with _session(target, breaker) as session:
        base = f"{target.url}{API_PREFIX}/tenants/{target.tenant}/databases"
        got = session.get(f"{base}/{target.database}")
        if got.status_code == 200:
            return
        if got.status_code == 404:
            got = session.post(base, json={"name": target.database})
            if got.status_code in (200, 409):  # 409: another process created it first
                log.info("created chroma database %s on %s", target.database, target.url)
                return
        raise ServiceError(
            f"the chroma server at {target.url} cannot open database {target.database!r} "
            f"({got.status_code}: {got.text[:200]}): create it or fix "
            f"{setting_label(ChromaSettings, 'chroma', 'database')}",
            service=SERVICE,
            status=got.status_code,
        )


def _guard(client: Any, target: ServerTarget, breaker: CircuitBreaker) -> None:
    """Route the client's HTTP calls through the guarded transport: chromadb builds its
    own ``httpx.Client`` (no timeout); it is replaced with one that keeps its headers."""
    server: Any = getattr(client, "_server", None)
    old = getattr(server, "_session", None)
    if old is None:  # a chromadb whose client is laid out otherwise: fail loudly
        raise RuntimeError(
            "this chromadb's HTTP client has no _server._session to guard; pin "
            "chromadb>=1.0,<2 or report the version"
        )
    server._session = _session(target, breaker, headers=dict(old.headers))
    old.close()


def drop_database(target: ServerTarget) -> bool:
    """Delete ``target.database`` and everything in it (a benchmark's private database).
    Returns whether the server confirmed; a failure is logged, never raised."""
    try:
        with _session(target, new_breaker()) as session:
            url = f"{target.url}{API_PREFIX}/tenants/{target.tenant}/databases/{target.database}"
            return bool(session.delete(url).status_code == 200)
    except ServiceError as exc:
        log.warning("could not drop chroma database %s: %s", target.database, exc)
        return False


class LazyClient:
    """A stand-in for :func:`connect`'s client while the server is down at store open:
    every attribute use connects first (through ``breaker``, so a paused breaker fails at
    once), raising :class:`ServiceUnavailable` until the server answers. The store treats
    that like a server that went down later: writes wait in the outbox, recall is skipped,
    and the next write or recall after the server is back connects and flushes them."""

    def __init__(self, target: ServerTarget, breaker: CircuitBreaker) -> None:
        self._target = target
        self._breaker = breaker
        self._lock = threading.Lock()
        self.client: Any = None
        """The connected client, ``None`` until the server answered."""

    def _connected(self) -> Any:
        with self._lock:
            if self.client is None:
                self.client = connect(self._target, self._breaker)
                log.info("chroma server %s answers: store connected", self._target.url)
            return self.client

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._connected(), name)


def close_client(client: Any) -> None:
    """Close a client made by :func:`connect`: its HTTP connections (chromadb's
    ``close()`` releases the client but leaves the session's sockets open) and the client."""
    if isinstance(client, LazyClient):
        if client.client is None:
            return
        client = client.client
    session = getattr(getattr(client, "_server", None), "_session", None)
    if session is not None:
        session.close()
    client.close()


__all__ = [
    "SERVICE",
    "LazyClient",
    "ServerTarget",
    "close_client",
    "connect",
    "drop_database",
    "fix_for",
    "new_breaker",
    "probe",
    "refused",
    "unreachable",
]
