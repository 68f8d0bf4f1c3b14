"""Modes ``host`` and ``platform``: mem0 over HTTP with httpx.

Self-hosted mem0 REST server (no ``/v1`` prefix): ``POST /memories`` (add),
``GET /memories?user_id=`` (list), ``GET|PUT|DELETE /memories/{id}``, ``POST /search``;
the key, when set, goes in ``X-API-Key``.

Mem0 Platform: ``POST /v1/memories/`` (add), ``POST /v2/memories/`` (list with filters),
``POST /v2/memories/search/`` (search with ``filters={"user_id": ...}``),
``GET|PUT|DELETE /v1/memories/{id}/``; ``Authorization: Token <key>``.

HTTP status is mapped to the typed errors: 404 → :class:`Mem0NotFound`, 400/422 →
:class:`Mem0Invalid`, anything else non-2xx or a transport error → :class:`Mem0Error`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from hermes_memory_mem0.backend import (
    Mem0Error,
    Mem0Invalid,
    Mem0NotFound,
    MemoryItem,
    add_body,
    item_from,
    items_from,
    owned_by,
)


class _HttpBackend:
    """Shared request/response handling, and the routes both APIs spell the same way:
    add at ``ADD_PATH``, get/update/delete at ``item_path(id)``."""

    ADD_PATH = ""
    ITEM_PATH = ""  # a format string with ``{id}``

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        timeout: float,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Content-Type": "application/json", **headers},
            timeout=timeout,
            transport=transport,
        )

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise Mem0Error(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if response.status_code == 404:
            raise Mem0NotFound(f"{method} {path}: not found")
        if response.status_code in (400, 422):
            raise Mem0Invalid(f"{method} {path}: {response.status_code} {response.text[:200]}")
        if response.status_code >= 300:
            raise Mem0Error(f"{method} {path}: HTTP {response.status_code} {response.text[:200]}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise Mem0Error(f"{method} {path}: response is not JSON") from exc

    def item_path(self, memory_id: str) -> str:
        return self.ITEM_PATH.format(id=quote(str(memory_id), safe=""))

    def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        user_id: str,
        agent_id: str,
        metadata: Mapping[str, Any],
        infer: bool,
    ) -> list[MemoryItem]:
        body = add_body(
            messages, user_id=user_id, agent_id=agent_id, metadata=metadata, infer=infer
        )
        return items_from(self._request("POST", self.ADD_PATH, json=body))

    def get(self, memory_id: str) -> MemoryItem | None:
        try:
            raw = self._request("GET", self.item_path(memory_id))
        except Mem0NotFound:
            return None
        return item_from(raw) if isinstance(raw, Mapping) else None

    def update(self, memory_id: str, text: str) -> None:
        self._request("PUT", self.item_path(memory_id), json={"text": text})

    def delete(self, memory_id: str) -> None:
        self._request("DELETE", self.item_path(memory_id))

    def close(self) -> None:
        self._client.close()


class HostBackend(_HttpBackend):
    """A self-hosted mem0 REST server."""

    ADD_PATH = "/memories"
    ITEM_PATH = "/memories/{id}"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"X-API-Key": api_key} if api_key else {}
        super().__init__(base_url, headers, timeout=timeout, transport=transport)

    def search(self, query: str, *, user_id: str, top_k: int) -> list[MemoryItem]:
        body = {"query": query, "user_id": user_id, "filters": {"user_id": user_id}, "top_k": top_k}
        found = items_from(self._request("POST", "/search", json=body))
        return owned_by(found, user_id, top_k)

    def list(self, *, user_id: str, limit: int) -> list[MemoryItem]:
        found = items_from(self._request("GET", "/memories", params={"user_id": user_id}))
        return owned_by(found, user_id, limit)


class PlatformBackend(_HttpBackend):
    """The hosted Mem0 Platform API."""

    ADD_PATH = "/v1/memories/"
    ITEM_PATH = "/v1/memories/{id}/"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        rerank: bool = False,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url, {"Authorization": f"Token {api_key}"}, timeout=timeout, transport=transport
        )
        self.rerank = rerank

    def search(self, query: str, *, user_id: str, top_k: int) -> list[MemoryItem]:
        body = {
            "query": query,
            "filters": {"user_id": user_id},
            "top_k": top_k,
            "rerank": self.rerank,
        }
        found = items_from(self._request("POST", "/v2/memories/search/", json=body))
        return owned_by(found, user_id, top_k)

    def list(self, *, user_id: str, limit: int) -> list[MemoryItem]:
        body = {"filters": {"user_id": user_id}, "page_size": limit}
        found = items_from(self._request("POST", "/v2/memories/", json=body))
        return owned_by(found, user_id, limit)


__all__ = ["HostBackend", "PlatformBackend"]
