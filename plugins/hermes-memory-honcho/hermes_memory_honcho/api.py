"""The Honcho v3 REST API calls this provider makes, over the shared
:class:`~hermes_core.providers.service.ServiceClient` (retries, breaker, typed errors).

Routes (all under ``/v3/workspaces``; see tests/openapi/honcho-v3.openapi.json):

* ``POST /v3/workspaces`` · ``POST /{w}/peers`` · ``POST /{w}/sessions`` — get-or-create,
  each done once per id and remembered;
* ``POST /{w}/sessions/{s}/messages`` — write a turn (batches of ≤ 100 messages);
* ``GET /{w}/peers/{p}/context`` — representation + peer card (``target``, ``search_query``);
* ``POST /{w}/peers/{p}/search`` · ``POST /{w}/sessions/{s}/search`` — message search;
* ``POST /{w}/peers/{p}/chat`` — the dialectic (``target``, ``reasoning_level``);
* ``GET|PUT /{w}/peers/{p}/card`` — the peer card (``target``);
* ``GET /{w}/sessions/{s}/context`` — summary, messages, representation, card;
* ``POST /{w}/conclusions`` · ``/conclusions/query`` · ``/conclusions/list`` ·
  ``DELETE /{w}/conclusions/{id}``.

Every method raises :class:`~hermes_core.providers.service.ServiceError` subclasses, and
:class:`ServiceBadResponse` when a 2xx body lacks the documented shape.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from hermes_core.providers.service import ServiceAPI, ServiceBadResponse, ServiceClient, given


def _q(value: str) -> str:
    return quote(value, safe="")


class HonchoAPI(ServiceAPI):
    """Typed calls for one workspace. Thread-safe."""

    def __init__(self, client: ServiceClient, workspace: str) -> None:
        super().__init__(client)
        self.workspace = workspace
        self._base = f"/v3/workspaces/{_q(workspace)}"
        self._lock = threading.Lock()
        self._have_workspace = False
        self._peers: set[str] = set()
        self._sessions: set[str] = set()

    # -- shape checks

    def _object(self, body: Any, what: str) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ServiceBadResponse(
                f"Honcho answered {what} with {type(body).__name__}, expected an object",
                service="Honcho",
            )
        return body

    def _list(self, body: Any, what: str) -> list[dict[str, Any]]:
        if not isinstance(body, list) or not all(isinstance(item, dict) for item in body):
            raise ServiceBadResponse(
                f"Honcho answered {what} with {type(body).__name__}, expected a list of objects",
                service="Honcho",
            )
        return body

    def _post_list(
        self,
        path: str,
        payload: Mapping[str, Any],
        what: str,
        *,
        idempotent: bool = False,
        deadline: float | None = None,
    ) -> list[dict[str, Any]]:
        """``POST path``; the answer must be a list of objects (:meth:`_list`)."""
        body = self.client.post(path, json_body=payload, idempotent=idempotent, deadline=deadline)
        return self._list(body, what)

    # -- get-or-create (remembered)

    def ensure_workspace(self, deadline: float | None = None) -> None:
        with self._lock:
            if self._have_workspace:
                return
        self.client.post(
            "/v3/workspaces", json_body={"id": self.workspace}, idempotent=True, deadline=deadline
        )
        with self._lock:
            self._have_workspace = True

    def ensure_peer(self, peer_id: str, *, deadline: float | None = None) -> None:
        self.ensure_workspace(deadline)
        with self._lock:
            if peer_id in self._peers:
                return
        self.client.post(
            f"{self._base}/peers",
            json_body={"id": peer_id, "metadata": {"source": "hermes"}},
            idempotent=True,
            deadline=deadline,
        )
        with self._lock:
            self._peers.add(peer_id)

    def ensure_session(
        self, session_id: str, peers: Mapping[str, Mapping[str, bool]], deadline: float | None
    ) -> None:
        for peer_id in peers:
            self.ensure_peer(peer_id, deadline=deadline)
        with self._lock:
            if session_id in self._sessions:
                return
        self.client.post(
            f"{self._base}/sessions",
            json_body={
                "id": session_id,
                "metadata": {"source": "hermes"},
                "peers": {pid: dict(cfg) for pid, cfg in peers.items()},
            },
            idempotent=True,
            deadline=deadline,
        )
        with self._lock:
            self._sessions.add(session_id)

    # -- messages

    def add_messages(
        self, session_id: str, messages: Sequence[Mapping[str, Any]], deadline: float | None
    ) -> None:
        for start in range(0, len(messages), 100):
            self._post_list(
                f"{self._base}/sessions/{_q(session_id)}/messages",
                {"messages": [dict(m) for m in messages[start : start + 100]]},
                "a message write",
                deadline=deadline,
            )

    def peer_search(
        self, peer_id: str, query: str, limit: int, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        return self._post_list(
            f"{self._base}/peers/{_q(peer_id)}/search",
            {"query": query, "limit": limit},
            "a peer search",
            idempotent=True,
            deadline=deadline,
        )

    def session_search(
        self,
        session_id: str,
        query: str,
        limit: int,
        *,
        peer_id: str | None = None,
        deadline: float | None = None,
    ) -> list[dict[str, Any]]:
        filters = {"peer_id": peer_id} if peer_id else None
        payload = {"query": query, "limit": limit, **given(filters=filters)}
        return self._post_list(
            f"{self._base}/sessions/{_q(session_id)}/search",
            payload,
            "a session search",
            idempotent=True,
            deadline=deadline,
        )

    # -- peer views

    def peer_context(
        self,
        observer: str,
        target: str | None,
        *,
        search_query: str | None = None,
        search_top_k: int = 8,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"target": target}
        if search_query:
            params["search_query"] = search_query[:2000]
            params["search_top_k"] = search_top_k
        body = self.client.get(
            f"{self._base}/peers/{_q(observer)}/context", params=params, deadline=deadline
        )
        return self._object(body, "a peer context")

    def chat(
        self,
        observer: str,
        query: str,
        *,
        target: str | None,
        reasoning_level: str,
        session_id: str | None = None,
        deadline: float | None = None,
    ) -> str:
        payload: dict[str, Any] = {
            "query": query,
            "reasoning_level": reasoning_level,
            "stream": False,
            **given(target=target, session_id=session_id),
        }
        body = self._object(
            self.client.post(
                f"{self._base}/peers/{_q(observer)}/chat",
                json_body=payload,
                idempotent=True,
                deadline=deadline,
            ),
            "a dialectic chat",
        )
        content = body.get("content")
        return content if isinstance(content, str) else ""

    def get_card(self, observer: str, target: str | None) -> list[str]:
        body = self._object(
            self.client.get(f"{self._base}/peers/{_q(observer)}/card", params={"target": target}),
            "a peer card",
        )
        card = body.get("peer_card")
        return [str(item) for item in card] if isinstance(card, list) else []

    def set_card(self, observer: str, target: str | None, card: Sequence[str]) -> list[str]:
        body = self._object(
            self.client.put(
                f"{self._base}/peers/{_q(observer)}/card",
                params={"target": target},
                json_body={"peer_card": list(card)},
            ),
            "a peer card write",
        )
        stored = body.get("peer_card")
        return [str(item) for item in stored] if isinstance(stored, list) else list(card)

    def session_context(
        self,
        session_id: str,
        *,
        tokens: int | None,
        perspective: str | None,
        target: str | None,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "summary": "true",
            "tokens": tokens,
            "peer_perspective": perspective,
            "peer_target": target,
        }
        body = self.client.get(
            f"{self._base}/sessions/{_q(session_id)}/context", params=params, deadline=deadline
        )
        return self._object(body, "a session context")

    # -- conclusions

    def create_conclusions(
        self, items: Sequence[Mapping[str, Any]], deadline: float | None = None
    ) -> list[dict[str, Any]]:
        return self._post_list(
            f"{self._base}/conclusions",
            {"conclusions": [dict(i) for i in items]},
            "a conclusion write",
            deadline=deadline,
        )

    def query_conclusions(
        self, query: str, filters: Mapping[str, Any], top_k: int
    ) -> list[dict[str, Any]]:
        return self._post_list(
            f"{self._base}/conclusions/query",
            {"query": query, "top_k": top_k, "filters": dict(filters)},
            "a conclusion query",
            idempotent=True,
        )

    def list_conclusions(
        self, filters: Mapping[str, Any], *, size: int = 50, page: int = 1
    ) -> tuple[list[dict[str, Any]], int]:
        """One page of conclusions matching ``filters`` and the number of pages."""
        body = self._object(
            self.client.post(
                f"{self._base}/conclusions/list",
                params={"page": page, "size": size, "reverse": "true"},
                json_body={"filters": dict(filters)},
                idempotent=True,
            ),
            "a conclusion list",
        )
        items = self._list(body.get("items", []), "a conclusion list")
        pages = body.get("pages")
        return items, int(pages) if isinstance(pages, int) else 1

    def delete_conclusion(self, conclusion_id: str) -> None:
        self.client.delete(f"{self._base}/conclusions/{_q(conclusion_id)}")


__all__ = ["HonchoAPI"]
