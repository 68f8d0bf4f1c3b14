"""The loopback-double kit: a real HTTP server on 127.0.0.1 for testing service providers.

A test double registers routes on a :class:`LoopbackServer`; the provider under test talks to
it over a real socket with its real client, retries and breaker. Every request is recorded
(:attr:`LoopbackServer.requests`). Faults are injected per route or globally
(:meth:`LoopbackServer.fault`): an HTTP status, a hang (no answer for N seconds, then the
connection is dropped), a delay, a malformed JSON body, or a dropped connection.

Given an OpenAPI document (3.0 or 3.1; a dict or a JSON/YAML path), each request is validated
against it before the handler runs, and each 2xx response after (with ``openapi-core``, a
test-only dependency: ``pip install hermes-memory-core[dev]``). A request that violates the document
is answered ``400`` with the reason and recorded in :attr:`LoopbackServer.violations`; a
response that violates it is sent as is and recorded. Tests end with
:meth:`LoopbackServer.assert_no_violations`. Injected faults are never validated.

Example::

    with LoopbackServer(openapi="tests/openapi.json") as server:
        server.route("POST", "/v3/search", lambda req: [{"id": "1", "content": "hi"}])
        server.fault(status=503, times=1)          # the first request gets 503
        ... run the provider against server.base_url ...
        server.assert_no_violations()
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from hermes_core.net import LoopbackHTTPServer, free_port

log = logging.getLogger("hermes_core.testing.loopback")

MALFORMED_JSON = b'{"results": [ {"id": "1", "content": "trunc'
"""The body a ``malformed`` fault sends with ``Content-Type: application/json``."""


@dataclass(frozen=True)
class LoopbackRequest:
    """One request as the server received it (header names lower-cased)."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes
    json: Any
    route: str | None = None
    path_params: Mapping[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)

    def arg(self, name: str, default: str | None = None) -> str | None:
        """The first value of query parameter ``name``."""
        values = self.query.get(name)
        return values[0] if values else default


@dataclass(frozen=True)
class LoopbackResponse:
    """What a handler answers. ``body`` (raw bytes) wins over ``json``."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"

    def payload(self) -> bytes:
        if self.body is not None:
            return self.body
        if self.json is None and self.status == 204:
            return b""
        return json.dumps(self.json, ensure_ascii=False).encode("utf-8")


def reply(
    data: Any = None, status: int = 200, headers: Mapping[str, str] | None = None
) -> LoopbackResponse:
    """A JSON response."""
    return LoopbackResponse(status=status, json=data, headers=dict(headers or {}))


def error_reply(status: int, detail: str) -> LoopbackResponse:
    """A ``{"detail": ...}`` error response (FastAPI's shape)."""
    return LoopbackResponse(status=status, json={"detail": detail})


Handler = Callable[[LoopbackRequest], Any]
"""Returns a :class:`LoopbackResponse`, or any JSON value (sent as 200), or None (204)."""

Guard = Callable[[LoopbackRequest], LoopbackResponse | None]
"""Answers a request itself (a refusal), or None to let the handler answer."""


def bearer_guard(api_key: str | None, detail: str = "Invalid or missing API key") -> Guard:
    """A guard that answers ``401 {"detail": detail}`` unless the request carries
    ``Authorization: Bearer <api_key>`` (no check when ``api_key`` is None)."""

    def guard(req: LoopbackRequest) -> LoopbackResponse | None:
        if api_key is None or req.headers.get("authorization") == f"Bearer {api_key}":
            return None
        return error_reply(401, detail)

    return guard


def _guarded(guard: Guard, handler: Handler) -> Handler:
    def run(req: LoopbackRequest) -> Any:
        denied = guard(req)
        return denied if denied is not None else handler(req)

    return run


@dataclass
class Fault:
    """An injected failure. Exactly one of ``status``/``hang``/``malformed``/``drop`` is the
    failure; ``delay`` alone slows the normal answer. ``times`` limits how many matching
    requests it hits (None: until cleared)."""

    status: int | None = None
    hang: float = 0.0
    delay: float = 0.0
    malformed: bool = False
    drop: bool = False
    retry_after: float | None = None
    detail: str = "injected fault"
    method: str | None = None
    route: str | None = None
    times: int | None = None
    hits: int = 0

    def matches(self, method: str, route: str | None) -> bool:
        if self.method is not None and self.method != method:
            return False
        return self.route is None or self.route == route

    def consume(self) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        self.hits += 1
        return True


@dataclass(frozen=True)
class Violation:
    """A request or response that does not match the OpenAPI document."""

    kind: str  # "request" | "response" | "route"
    method: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind} {self.method} {self.path}: {self.message}"


@dataclass
class _Route:
    method: str
    pattern: str
    regex: re.Pattern[str]
    handler: Handler


def _compile(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^/{}]+\})", pattern)
    out = []
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            out.append(f"(?P<{part[1:-1]}>[^/]+)")
        else:
            out.append(re.escape(part))
    return re.compile("^" + "".join(out) + "$")


def load_openapi(source: Path | str | Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAPI document from a dict or a ``.json``/``.yaml`` file."""
    if isinstance(source, Mapping):
        return dict(json.loads(json.dumps(source)))
    path = Path(source)
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if not isinstance(data, dict) or "openapi" not in data:
        raise ValueError(f"{path} is not an OpenAPI document (no 'openapi' key)")
    return data


_OPENAPI_CACHE: dict[str, Any] = {}
_OPENAPI_LOCK = threading.Lock()


def _openapi_for(document: Mapping[str, Any]) -> tuple[Any, str, threading.Lock]:
    """``(openapi_core.OpenAPI, path prefix, lock)`` for ``document``, built once per content.
    openapi-core's parsed document is not documented as thread-safe, so validations against
    it are serialised with the lock (each takes milliseconds).

    The document's first server is replaced by its path alone (``https://api.x/v2`` →
    ``/v2``): a relative server matches any host, so one parsed document serves every
    loopback port (parsing and checking a document takes seconds; a test should not pay
    that for each server it starts).
    """
    import hashlib

    from openapi_core import OpenAPI

    raw = json.dumps(document, sort_keys=True)
    key = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    with _OPENAPI_LOCK:
        cached = _OPENAPI_CACHE.get(key)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        spec = json.loads(raw)
        prefix = ""
        servers = spec.get("servers") or []
        if servers and isinstance(servers[0], Mapping):
            prefix = urlsplit(str(servers[0].get("url", ""))).path.rstrip("/")
        spec["servers"] = [{"url": prefix or "/"}]
        made = (OpenAPI.from_dict(spec), prefix, threading.Lock())
        _OPENAPI_CACHE[key] = made
        return made


class _Validator:
    """openapi-core validation of loopback requests and responses against the document."""

    def __init__(self, document: Mapping[str, Any], host_url: str) -> None:
        self.openapi, self.prefix, self.lock = _openapi_for(document)
        self.host_url = host_url

    def _request(self, req: LoopbackRequest) -> Any:
        from openapi_core.testing import MockRequest

        content_type = req.headers.get("content-type", "application/json")
        return MockRequest(
            self.host_url,
            req.method.lower(),
            req.path,
            args={k: list(v) for k, v in req.query.items()},
            headers=dict(req.headers),
            data=req.body or None,
            content_type=content_type.split(";")[0].strip().lower(),
        )

    def check_request(self, req: LoopbackRequest) -> str | None:
        try:
            with self.lock:
                self.openapi.validate_request(self._request(req))
        except Exception as exc:
            return _explain(exc)
        return None

    def check_response(self, req: LoopbackRequest, resp: LoopbackResponse) -> str | None:
        from openapi_core.testing import MockResponse

        response = MockResponse(
            resp.payload(),
            status_code=resp.status,
            headers=dict(resp.headers),
            content_type=resp.content_type,
        )
        try:
            with self.lock:
                self.openapi.validate_response(self._request(req), response)
        except Exception as exc:
            return _explain(exc)
        return None


def _explain(exc: BaseException) -> str:
    parts = [f"{type(exc).__name__}: {exc}"]
    seen: set[int] = set()
    cause: BaseException | None = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        parts.append(f"{type(cause).__name__}: {cause}")
        for sub in getattr(cause, "schema_errors", None) or ():
            parts.append(f"  - {getattr(sub, 'message', sub)} at {list(getattr(sub, 'path', []))}")
        cause = cause.__cause__ or cause.__context__
    return "\n".join(parts)[:4000]


class LoopbackServer(LoopbackHTTPServer):
    """A threaded HTTP server on ``127.0.0.1`` (ephemeral port) serving registered routes.

    Thread-safe: routes, faults and records share one lock. Use as a context manager or call
    :meth:`start` / :meth:`stop`. ``openapi`` enables validation (see module docstring);
    ``validate_responses`` can turn response validation off for a document whose response
    schemas are known to be wrong (say why in the test).
    """

    def __init__(
        self,
        *,
        openapi: Path | str | Mapping[str, Any] | None = None,
        validate_responses: bool = True,
        name: str = "loopback",
    ) -> None:
        self.name = name
        self.thread_name = f"{name}-server"
        self._document = load_openapi(openapi) if openapi is not None else None
        self._validate_responses = validate_responses
        self._validator: _Validator | None = None
        self._routes: list[_Route] = []
        self._faults: list[Fault] = []
        self._requests: list[LoopbackRequest] = []
        self._violations: list[Violation] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    # -- lifecycle

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def _after_start(self) -> None:
        if self._document is not None:
            self._validator = _Validator(self._document, self.base_url)

    def _before_stop(self) -> None:
        self._stopping.set()  # hung requests are released (their connections dropped)

    # -- routes and faults

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Serve ``method pattern`` (``{name}`` segments become ``path_params``)."""
        with self._lock:
            self._routes.append(_Route(method.upper(), pattern, _compile(pattern), handler))

    def route_all(
        self, routes: Iterable[tuple[str, str, Handler]], *, guard: Guard | None = None
    ) -> None:
        """Serve each ``(method, pattern, handler)``; a request ``guard`` answers (say, a
        401 from :func:`bearer_guard`) never reaches the handler."""
        for method, pattern, handler in routes:
            self.route(method, pattern, handler if guard is None else _guarded(guard, handler))

    def fault(
        self,
        *,
        status: int | None = None,
        hang: float = 0.0,
        delay: float = 0.0,
        malformed: bool = False,
        drop: bool = False,
        retry_after: float | None = None,
        detail: str = "injected fault",
        method: str | None = None,
        route: str | None = None,
        times: int | None = None,
    ) -> Fault:
        """Inject a failure for requests to ``route`` (a registered pattern) and ``method``,
        or to every route when both are None. Newest fault first."""
        made = Fault(
            status=status,
            hang=hang,
            delay=delay,
            malformed=malformed,
            drop=drop,
            retry_after=retry_after,
            detail=detail,
            method=method.upper() if method else None,
            route=route,
            times=times,
        )
        with self._lock:
            self._faults.insert(0, made)
        return made

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @contextmanager
    def down(self, status: int = 503) -> Iterator[Fault]:
        """Every request answers ``status`` inside the block; all faults are cleared after."""
        try:
            yield self.fault(status=status)
        finally:
            self.clear_faults()

    # -- records

    @property
    def requests(self) -> list[LoopbackRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, method: str, route: str) -> list[LoopbackRequest]:
        """Requests matched to the registered ``route`` pattern with ``method``."""
        return [r for r in self.requests if r.method == method.upper() and r.route == route]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    @property
    def violations(self) -> list[Violation]:
        with self._lock:
            return list(self._violations)

    def assert_no_violations(self) -> None:
        """Fail (AssertionError listing each) if any request or response broke the document."""
        found = self.violations
        assert not found, "OpenAPI violations:\n" + "\n".join(str(v) for v in found)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Poll until at least ``count`` requests arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.requests) >= count:
                return True
            time.sleep(0.01)
        return len(self.requests) >= count

    # -- serving (called from handler threads)

    def _match(self, method: str, path: str) -> tuple[_Route | None, dict[str, str]]:
        with self._lock:
            routes = list(self._routes)
        for made in routes:
            if made.method != method:
                continue
            found = made.regex.match(path)
            if found:
                return made, {k: unquote(v) for k, v in found.groupdict().items()}
        return None, {}

    def _fault_for(self, method: str, route: str | None) -> Fault | None:
        with self._lock:
            for made in self._faults:
                if made.matches(method, route) and made.consume():
                    return made
        return None

    def _record(self, req: LoopbackRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _violation(self, kind: str, req: LoopbackRequest, message: str) -> None:
        with self._lock:
            self._violations.append(Violation(kind, req.method, req.path, message))
        log.error(
            "%s: OpenAPI %s violation on %s %s: %s", self.name, kind, req.method, req.path, message
        )

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _serve(self, req: LoopbackRequest) -> LoopbackResponse | None:
        """The response to send, or None to drop the connection."""
        fault = self._fault_for(req.method, req.route)
        if fault is not None:
            if fault.delay:
                self._sleep(fault.delay)
            if fault.hang:
                self._sleep(fault.hang)
                return None
            if fault.drop:
                return None
            if fault.malformed:
                return LoopbackResponse(status=200, body=MALFORMED_JSON)
            if fault.status is not None:
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = f"{fault.retry_after:g}"
                return LoopbackResponse(
                    status=fault.status, json={"detail": fault.detail}, headers=headers
                )
        route, _ = self._match(req.method, req.path)
        if route is None:
            return error_reply(404, f"loopback {self.name}: no route for {req.method} {req.path}")
        if self._validator is not None:
            problem = self._validator.check_request(req)
            if problem is not None:
                self._violation("request", req, problem)
                return error_reply(400, f"request violates the OpenAPI document: {problem}")
        try:
            result = route.handler(req)
        except Exception as exc:  # a bug in the double: answer 500 and say so
            log.exception("%s: handler for %s %s raised", self.name, req.method, route.pattern)
            return error_reply(500, f"loopback handler raised {type(exc).__name__}: {exc}")
        response = _as_response(result)
        if (
            self._validator is not None
            and self._validate_responses
            and 200 <= response.status < 300
        ):
            problem = self._validator.check_response(req, response)
            if problem is not None:
                self._violation("response", req, problem)
        return response


def _as_response(result: Any) -> LoopbackResponse:
    if isinstance(result, LoopbackResponse):
        return result
    if result is None:
        return LoopbackResponse(status=204)
    return LoopbackResponse(json=result)


def _make_handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s: " + format, server.name, *args)

        def _handle(self) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            method = self.command.upper()
            path = unquote(split.path)
            route, params = server._match(method, path)
            req = LoopbackRequest(
                method=method,
                path=path,
                query=parse_qs(split.query, keep_blank_values=True),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                json=parsed,
                route=route.pattern if route else None,
                path_params=params,
            )
            server._record(req)
            response = server._serve(req)
            if response is None:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            payload = response.payload()
            self.send_response(response.status)
            if payload or response.status != 204:
                self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(payload)))
            for key, value in response.headers.items():
                self.send_header(key, value)
            self.end_headers()
            if payload:
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    return Handler


_WORDS = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_STOP_WORDS = (
    "the and for are was were what which who whom whose when where why how you your yours "
    "my mine our ours his her hers its their theirs this that these those with from into "
    "about does did have has had not but can could would should will shall may might "
    "please remember"
)
_STOP = frozenset(_STOP_WORDS.split())


def text_terms(text: str) -> set[str]:
    """Search terms of ``text`` for a double's naive search: lower-cased words of 3+ letters
    (minus a few stop words) and numbers, plus every CJK character pair (Chinese has no
    spaces, so bigrams stand in for words)."""
    terms: set[str] = set()
    for word in _WORDS.findall(text.lower()):
        if _CJK.search(word):
            chars = _CJK.findall(word)
            terms.update(a + b for a, b in itertools.pairwise(chars))
        elif (len(word) >= 3 or word.isdigit()) and word not in _STOP:
            terms.add(word)
    return terms


def match_score(query: str, text: str) -> int:
    """How many search terms ``query`` and ``text`` share (0 = no match)."""
    return len(text_terms(query) & text_terms(text))


def iter_routes(server: LoopbackServer) -> Iterator[tuple[str, str]]:
    """``(method, pattern)`` of every registered route (for coverage checks)."""
    with server._lock:
        routes = list(server._routes)
    for made in routes:
        yield made.method, made.pattern


__all__ = [
    "MALFORMED_JSON",
    "Fault",
    "Guard",
    "LoopbackRequest",
    "LoopbackResponse",
    "LoopbackServer",
    "Violation",
    "bearer_guard",
    "error_reply",
    "free_port",
    "iter_routes",
    "load_openapi",
    "match_score",
    "reply",
    "text_terms",
]
