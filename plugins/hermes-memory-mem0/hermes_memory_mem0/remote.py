"""Modes ``host`` and ``platform``: mem0 over HTTP, through the frame's service client.

Self-hosted mem0 REST server (no ``/v1`` prefix): ``POST /memories`` (add),
``GET /memories?user_id=`` (list), ``GET|PUT|DELETE /memories/{id}``, ``POST /search``;
the key, when set, goes in ``X-API-Key``.

Mem0 Platform: ``POST /v1/memories/`` (add), ``POST /v2/memories/`` (list with filters),
``POST /v2/memories/search/`` (search with ``filters={"user_id": ...}``),
``GET|PUT|DELETE /v1/memories/{id}/``; ``Authorization: Token <key>``.

Every request goes through the frame's
:class:`~hermes_core.providers.service.ServiceClient` (timeout, circuit breaker, the typed
errors: 404 → :class:`~hermes_core.providers.service.ServiceNotFound`, 400/422 →
``ServiceRequestError``, 401/403 → ``ServiceAuthError``, 5xx or a transport error →
``ServiceUnavailable``); the provider builds the client (see ``Mem0Provider.client_options``).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from hermes_core.providers.service import ServiceAPI, ServiceClient, ServiceNotFound
from hermes_memory_mem0.backend import AddRequest, MemoryItem, item_from, items_from, owned_by


class _HttpBackend(ServiceAPI):
    """The routes both APIs spell the same way: add at ``ADD_PATH``, get/update/delete at
    ``item_path(id)``; requests through ``client``."""

    ADD_PATH = ""
    ITEM_PATH = ""  # a format string with ``{id}``

    def item_path(self, memory_id: str) -> str:
        return self.ITEM_PATH.format(id=quote(str(memory_id), safe=""))

    def add(self, request: AddRequest) -> list[MemoryItem]:
        return items_from(self.client.post(self.ADD_PATH, json_body=request.body()))

    def get(self, memory_id: str) -> MemoryItem | None:
        try:
            raw = self.client.get(self.item_path(memory_id))
        except ServiceNotFound:
            return None
        return item_from(raw) if isinstance(raw, Mapping) else None

    def update(self, memory_id: str, text: str) -> None:
        self.client.put(self.item_path(memory_id), json_body={"text": text})

    def delete(self, memory_id: str) -> None:
        self.client.delete(self.item_path(memory_id))

    def close(self) -> None:
        self.client.close()


class HostBackend(_HttpBackend):
    """A self-hosted mem0 REST server."""

    ADD_PATH = "/memories"
    ITEM_PATH = "/memories/{id}"

    def search(self, query: str, *, user_id: str, top_k: int) -> list[MemoryItem]:
        body = {"query": query, "user_id": user_id, "filters": {"user_id": user_id}, "top_k": top_k}
        found = items_from(self.client.post("/search", json_body=body))
        return owned_by(found, user_id, top_k)

    def list(self, *, user_id: str, limit: int) -> list[MemoryItem]:
        found = items_from(self.client.get("/memories", params={"user_id": user_id}))
        return owned_by(found, user_id, limit)


class PlatformBackend(_HttpBackend):
    """The hosted Mem0 Platform API."""

    ADD_PATH = "/v1/memories/"
    ITEM_PATH = "/v1/memories/{id}/"

    def __init__(self, client: ServiceClient, *, rerank: bool = False) -> None:
        super().__init__(client)
        self.rerank = rerank

    def search(self, query: str, *, user_id: str, top_k: int) -> list[MemoryItem]:
        body = {
            "query": query,
            "filters": {"user_id": user_id},
            "top_k": top_k,
            "rerank": self.rerank,
        }
        found = items_from(self.client.post("/v2/memories/search/", json_body=body))
        return owned_by(found, user_id, top_k)

    def list(self, *, user_id: str, limit: int) -> list[MemoryItem]:
        body = {"filters": {"user_id": user_id}, "page_size": limit}
        found = items_from(self.client.post("/v2/memories/", json_body=body))
        return owned_by(found, user_id, limit)


__all__ = ["HostBackend", "PlatformBackend"]
