"""Running the MCP server: stdio (one client, the process's user) or streamable HTTP (bearer
tokens from :class:`~hermes_core.mcp.tokens.TokenStore`, loopback unless told otherwise).

``run_stdio`` returns when the client closes stdin; ``run_http`` when the process is
interrupted. Either way every MCP session is closed (``on_session_end``, provider work
drained) before the host is.

Imports the ``mcp`` SDK, uvicorn and starlette: install ``hermes-memory-core[mcp]``.
"""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_core.host import MemoryHost
from hermes_core.net import is_loopback

from .server import SESSION_HEADER, USER_CLAIM, Identity, build_server
from .service import McpService
from .tokens import TokenStore

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
REAP_EVERY = 60.0
VERIFY_TIMEOUT = 5.0
"""Seconds a bearer-token check may take before the request is refused (the check reads
the token file in a worker thread; the event loop never waits on a file)."""
SHUTDOWN_GRACE = 1
"""Seconds open streams get to finish after SIGINT/SIGTERM before the server stops."""


class StoreVerifier:
    """The SDK's ``TokenVerifier`` over a :class:`TokenStore`: checked on every HTTP request,
    so a revoked token stops working at once."""

    def __init__(self, store: TokenStore) -> None:
        self.store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        # off the event loop, and never waited on for long: a request whose check does not
        # finish in VERIFY_TIMEOUT seconds is refused, every other request is still served
        with anyio.move_on_after(VERIFY_TIMEOUT):
            record = await anyio.to_thread.run_sync(
                self.store.verify, token, abandon_on_cancel=True
            )
            if record is not None:
                return self._access(token, record)
        return None

    @staticmethod
    def _access(token: str, record: Any) -> AccessToken:
        return AccessToken(
            token=token,
            client_id=f"hermes-token-{record.id}",
            scopes=[],
            subject=record.user,
            claims={USER_CLAIM: record.user},
        )


class SessionEndWatcher:
    """ASGI wrapper: a successful ``DELETE`` of an MCP session closes its conversations."""

    def __init__(self, app: ASGIApp, on_end: Callable[[str], Any]) -> None:
        self.app = app
        self.on_end = on_end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        session_id = next(
            (
                value.decode("latin-1")
                for key, value in scope.get("headers", [])
                if key.decode("latin-1").lower() == SESSION_HEADER
            ),
            None,
        )
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        await self.app(scope, receive, watch)
        if session_id and status and status[0] < 400:
            await anyio.to_thread.run_sync(self.on_end, f"http:{session_id}")


class AnsweringReadStream:
    """A stdio read stream that answers a line it cannot parse with a JSON-RPC error
    (``-32700`` for invalid JSON, ``-32600`` for JSON that is no JSON-RPC message, id
    ``null``) instead of dropping it silently, and passes everything else through."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def _answer(self, exc: Exception) -> None:
        invalid_json = isinstance(exc, ValidationError) and any(
            error.get("type") == "json_invalid" for error in exc.errors()
        )
        code, message = (
            (types.PARSE_ERROR, "Parse error: the line is not valid JSON")
            if invalid_json
            else (types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message")
        )
        error = types.JSONRPCError(
            jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
        )
        try:
            await self._write.send(SessionMessage(error))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringReadStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def run_stdio(host: MemoryHost, *, user: str | None, skill_manage: bool | None) -> None:
    """Serve one client over stdin/stdout as ``user``."""
    service = McpService(host, skill_manage=skill_manage)
    server = build_server(service, Identity("stdio", user))
    try:
        async with stdio_server() as (read_stream, write_stream):
            answering = AnsweringReadStream(read_stream, write_stream)
            await server.run(answering, write_stream, server.create_initialization_options())
    finally:
        await anyio.to_thread.run_sync(service.close)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def build_http_app(service: McpService, store: TokenStore, *, host: str) -> ASGIApp:
    """The Starlette app (bearer auth on ``/mcp``) wrapped by :class:`SessionEndWatcher`."""
    server = build_server(service, Identity("http"), offer_discover=False)
    base = f"http://{host}/"
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        session_idle_timeout=service.idle_timeout,
        auth=AuthSettings(issuer_url=base, resource_server_url=None),
        token_verifier=StoreVerifier(store),
    )
    return SessionEndWatcher(app, service.close_connection)


async def run_http(
    host: MemoryHost,
    *,
    bind: str,
    port: int,
    skill_manage: bool | None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve streamable HTTP on ``bind:port`` until interrupted. ``announce`` receives the
    URL once the socket listens (the CLI prints it; tests read the port from it)."""
    service = McpService(host, skill_manage=skill_manage)
    store = TokenStore(host.home)
    app = build_http_app(service, store, host=bind)
    sock = bind_socket(bind, port)
    actual = sock.getsockname()[1]
    shown = f"[{bind}]" if ":" in bind else bind
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    server = uvicorn.Server(config)

    async def reaper() -> None:
        while True:
            await anyio.sleep(min(REAP_EVERY, service.idle_timeout / 2))
            await anyio.to_thread.run_sync(service.reap_idle)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reaper)
            if announce is not None:
                announce(f"http://{shown}:{actual}{MCP_PATH}")
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()
    finally:
        sock.close()
        await anyio.to_thread.run_sync(service.close)


def warn(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


__all__ = [
    "MCP_PATH",
    "SessionEndWatcher",
    "StoreVerifier",
    "bind_socket",
    "build_http_app",
    "is_loopback",
    "run_http",
    "run_stdio",
]
