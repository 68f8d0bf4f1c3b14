"""The OpenViking HTTP API (v1, as served by openviking-server 0.5.x), over the shared
:class:`~hermes_core.providers.service.ServiceClient` (timeouts, retries with backoff, circuit
breaker, errors that name the setting to fix).

Every answer is an envelope ``{"status": "ok", "result": ...}``; :meth:`VikingClient.call`
returns ``result``. A 2xx body that is not such an envelope raises
:class:`~hermes_core.providers.service.ServiceBadResponse` ("malformed ...").

Why not the ``openviking-sdk`` package: its sync client runs every call on one shared
asyncio loop, reads ``~/.openviking/ovcli.conf`` and ``OPENVIKING_*`` on its own, and has no
circuit breaker; the few endpoints used here are plain JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.providers.service import ServiceAPI, ServiceBadResponse, ServiceRequestError
from hermes_memory_openviking.scope import Identity

SERVICE = "OpenViking"
API = "/api/v1"


class VikingClient(ServiceAPI):
    """One client per provider instance; thread-safe (the underlying httpx client is)."""

    def call(
        self,
        method: str,
        path: str,
        identity: Identity,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
        idempotent: bool | None = None,
    ) -> Any:
        """``result`` of ``method API+path`` for ``identity``; raises ServiceError."""
        full = API + path
        body = self.client.request(
            method,
            full,
            json_body=json_body,
            params=params,
            headers=identity.headers(),
            timeout=timeout,
            deadline=deadline,
            idempotent=idempotent,
        )
        return unwrap(body, method, full)

    # -- the endpoints used

    def find(
        self, identity: Identity, payload: Mapping[str, Any], *, deadline: float | None = None
    ) -> dict[str, Any]:
        """``POST /search/find``: semantic search without session context."""
        return self._search("/search/find", identity, payload, deadline)

    def search(
        self, identity: Identity, payload: Mapping[str, Any], *, deadline: float | None = None
    ) -> dict[str, Any]:
        """``POST /search/search``: search with session context (intent analysis)."""
        return self._search("/search/search", identity, payload, deadline)

    def _search(
        self, path: str, identity: Identity, payload: Mapping[str, Any], deadline: float | None
    ) -> dict[str, Any]:
        """A search ``POST`` (idempotent, so retried) answering a JSON object."""
        body = self.call(
            "POST", path, identity, json_body=dict(payload), deadline=deadline, idempotent=True
        )
        return _mapping(body, path)

    def read(self, identity: Identity, uri: str, level: str = "full") -> str:
        """File content (``full``, L2) or a directory's ``abstract`` (L0) / ``overview`` (L1)."""
        path = {"abstract": "/content/abstract", "overview": "/content/overview"}.get(
            level, "/content/read"
        )
        result = self.call("GET", path, identity, params={"uri": uri})
        if isinstance(result, str):
            return result
        if isinstance(result, Mapping):
            for key in ("content", "text", "abstract", "overview"):
                value = result.get(key)
                if isinstance(value, str):
                    return value
        return ""

    def write(
        self,
        identity: Identity,
        uri: str,
        content: str,
        *,
        mode: str = "create",
        wait: bool = False,
    ) -> dict[str, Any]:
        """``POST /content/write``; ``wait`` returns once the text is indexed."""
        body = {"uri": uri, "content": content, "mode": mode, "wait": wait}
        return _mapping(
            self.call("POST", "/content/write", identity, json_body=body), "/content/write"
        )

    def fs(self, identity: Identity, action: str, uri: str) -> Any:
        """``GET /fs/ls|tree|stat``."""
        return self.call("GET", f"/fs/{action}", identity, params={"uri": uri})

    def add_messages(
        self, identity: Identity, session_id: str, messages: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """``POST /sessions/{id}/messages/batch`` (the session is created on first add)."""
        return _mapping(
            self.call(
                "POST",
                f"/sessions/{_segment(session_id)}/messages/batch",
                identity,
                json_body={"messages": messages},
            ),
            "messages/batch",
        )

    def commit(self, identity: Identity, session_id: str) -> dict[str, Any]:
        """``POST /sessions/{id}/commit``: archive the messages, extract memories."""
        return _mapping(
            self.call(
                "POST",
                f"/sessions/{_segment(session_id)}/commit",
                identity,
                json_body={"keep_recent_count": 0},
            ),
            "commit",
        )

    def add_resource(self, identity: Identity, payload: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /resources``."""
        return _mapping(
            self.call("POST", "/resources", identity, json_body=dict(payload)), "/resources"
        )

    def status(self, identity: Identity) -> Any:
        """``GET /system/status`` (checks the key)."""
        return self.call("GET", "/system/status", identity)


def unwrap(body: Any, method: str, path: str) -> Any:
    """``result`` of an OpenViking envelope; ServiceBadResponse / ServiceRequestError else."""
    if not isinstance(body, Mapping) or "status" not in body:
        raise ServiceBadResponse(
            f"{SERVICE} answered {method} {path} with a malformed body (no "
            f'{{"status": ..., "result": ...}} envelope); is OPENVIKING_URL an OpenViking server?',
            service=SERVICE,
            method=method,
            path=path,
        )
    if body.get("status") != "ok":
        error = body.get("error")
        message = error.get("message") if isinstance(error, Mapping) else error
        raise ServiceRequestError(
            f"{SERVICE} refused {method} {path}: {message or body.get('status')}",
            service=SERVICE,
            method=method,
            path=path,
        )
    return body.get("result")


def _mapping(result: Any, what: str) -> dict[str, Any]:
    if result is None:
        return {}
    if not isinstance(result, Mapping):
        raise ServiceBadResponse(
            f"{SERVICE} answered {what} with a malformed result ({type(result).__name__})",
            service=SERVICE,
            path=what,
        )
    return dict(result)


def _segment(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


__all__ = ["API", "SERVICE", "VikingClient", "unwrap"]
