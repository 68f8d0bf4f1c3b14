"""The Supermemory REST calls this provider makes, over the shared
:class:`~hermes_core.providers.service.ServiceClient` (retries, breaker, typed errors).

* ``POST /v3/documents`` — store content (``customId`` makes a resend an update);
* ``POST /v4/search`` — search memories / document chunks in one container;
* ``POST /v4/profile`` — static + dynamic profile facts, plus search results for ``q``;
* ``DELETE /v4/memories`` — forget one memory (by id or exact content) in one container;
* ``POST /v4/conversations`` — ingest a whole conversation (the server diffs a resent
  ``conversationId``, so a later, longer transcript appends).

Every call sends ``x-sm-source: hermes`` (Supermemory files the writes under a "Hermes"
space). A 2xx body without the documented shape raises :class:`ServiceBadResponse`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.providers.service import ServiceAPI, ServiceBadResponse, given

SOURCE_HEADER = {"x-sm-source": "hermes"}


def _object(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ServiceBadResponse(
            f"Supermemory answered {what} with {type(body).__name__}, expected an object",
            service="Supermemory",
        )
    return body


def _results(body: Any, what: str) -> list[dict[str, Any]]:
    results = _object(body, what).get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise ServiceBadResponse(
            f"Supermemory answered {what} without a results list", service="Supermemory"
        )
    return results


@dataclass(frozen=True)
class SearchHit:
    """One search result: its text (the memory, else the document chunk) and the API's
    ``similarity`` (None when absent or not a number)."""

    id: str
    text: str
    similarity: float | None = None


def search_hits(results: Sequence[Mapping[str, Any]]) -> list[SearchHit]:
    """``results`` (the documented ``SearchResult`` objects) as :class:`SearchHit`."""
    out = []
    for result in results:
        similarity = result.get("similarity")
        if isinstance(similarity, bool) or not isinstance(similarity, int | float):
            similarity = None
        text = result.get("memory") or result.get("chunk") or ""
        out.append(SearchHit(str(result.get("id", "")), str(text), similarity))
    return out


class SupermemoryAPI(ServiceAPI):
    """Typed calls; every one names its container tag explicitly."""

    def add_document(
        self,
        content: str,
        container_tag: str,
        *,
        custom_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        entity_context: str = "",
        deadline: float | None = None,
    ) -> str:
        payload = {
            "content": content,
            "containerTags": [container_tag],
            **given(
                customId=custom_id,
                metadata={"sm_source": "hermes", **metadata} if metadata else None,
                entityContext=entity_context[:1500],
            ),
        }
        body = self._post("/v3/documents", payload, "a document write", bool(custom_id), deadline)
        return str(body.get("id", ""))

    def search(
        self,
        query: str,
        container_tag: str,
        *,
        limit: int,
        search_mode: str,
        deadline: float | None = None,
    ) -> list[dict[str, Any]]:
        payload = {
            "q": query,
            "containerTag": container_tag,
            "limit": limit,
            "searchMode": search_mode,
        }
        return _results(self._post("/v4/search", payload, "a search", True, deadline), "a search")

    def profile(
        self, container_tag: str, *, query: str | None = None, deadline: float | None = None
    ) -> tuple[list[str], list[str], list[SearchHit]]:
        """``(static, dynamic, search_hits)``."""
        payload = {"containerTag": container_tag, **given(q=query)}
        body = self._post("/v4/profile", payload, "a profile request", True, deadline)
        profile = body.get("profile")
        if not isinstance(profile, dict):
            raise ServiceBadResponse(
                "Supermemory answered a profile request without a profile object",
                service="Supermemory",
            )
        static = [str(s) for s in profile.get("static") or [] if s]
        dynamic = [str(s) for s in profile.get("dynamic") or [] if s]
        search = body.get("searchResults")
        results = _results(search, "a profile search") if isinstance(search, dict) else []
        return static, dynamic, search_hits(results)

    def forget(self, container_tag: str, *, memory_id: str) -> bool:
        body = _object(
            self.client.delete(
                "/v4/memories",
                json_body={"containerTag": container_tag, "id": memory_id},
                headers=SOURCE_HEADER,
            ),
            "a forget request",
        )
        return bool(body.get("forgotten"))

    def add_conversation(
        self,
        conversation_id: str,
        messages: Sequence[Mapping[str, str]],
        container_tag: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        entity_context: str = "",
        deadline: float | None = None,
    ) -> None:
        payload: dict[str, Any] = {
            "conversationId": conversation_id,
            "messages": [dict(m) for m in messages],
            "containerTags": [container_tag],
            "metadata": {"sm_source": "hermes", **(metadata or {})},
            **given(entityContext=entity_context[:1500]),
        }
        self._post("/v4/conversations", payload, "a conversation ingest", True, deadline)

    def _post(
        self,
        path: str,
        payload: Mapping[str, Any],
        what: str,
        idempotent: bool,
        deadline: float | None,
    ) -> dict[str, Any]:
        """``POST path`` with the source header; the answer must be a JSON object."""
        body = self.client.post(
            path, json_body=payload, headers=SOURCE_HEADER, idempotent=idempotent, deadline=deadline
        )
        return _object(body, what)


__all__ = ["SOURCE_HEADER", "SupermemoryAPI"]
