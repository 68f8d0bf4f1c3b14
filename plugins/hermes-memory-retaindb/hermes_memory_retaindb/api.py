"""The part of RetainDB's Memory API (v1) this provider uses.

Routes (RetainDB API reference, "Memory API", https://www.retaindb.com/docs/api/memory):
``POST /v1/memory`` (write one memory; honours ``Idempotency-Key``), ``POST
/v1/memory/search``, ``POST /v1/memory/ingest/session`` (a transcript for extraction),
``GET /v1/memory/profile/{userId}``, ``GET /v1/memory/{memoryId}`` and ``DELETE
/v1/memory/{memoryId}``. Auth: ``Authorization: Bearer <key>``.

Every call names its ``project`` and, where the route takes one, the ``user_id``; answers are
filtered again on the client (:meth:`RetainDBAPI.search` keeps only the caller's own
memories), because RetainDB also returns project-wide memories to a user's search and
deletes by id within the whole organisation.

Transport, retries, timeouts and the circuit breaker are the shared
:class:`~hermes_core.providers.service.ServiceClient`'s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hermes_core.providers.service import ServiceAPI, ServiceBadResponse, ServiceClient, given


@dataclass(frozen=True)
class Memory:
    """One stored memory."""

    id: str
    content: str
    type: str | None = None
    user_id: str | None = None
    score: float | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "content": self.content, **given(type=self.type)}
        if self.score is not None:
            out["score"] = round(self.score, 4)
        return out


def idempotency_key(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return "hermes-" + h.hexdigest()[:32]


def _memory(raw: Any, score: Any = None) -> Memory | None:
    if not isinstance(raw, Mapping):
        return None
    content = raw.get("content")
    if not isinstance(content, str):
        return None
    kind = raw.get("type", raw.get("memory_type"))
    user = raw.get("user_id")
    return Memory(
        id=str(raw.get("id", "")),
        content=content,
        type=kind if isinstance(kind, str) else None,
        user_id=user if isinstance(user, str) else None,
        score=float(score) if isinstance(score, int | float) else None,
    )


class RetainDBAPI(ServiceAPI):
    """Typed calls over one :class:`ServiceClient`, all within ``project``."""

    def __init__(self, client: ServiceClient, project: str) -> None:
        super().__init__(client)
        self.project = project

    def remember(
        self,
        user_id: str,
        content: str,
        *,
        memory_type: str,
        importance: float,
        session_id: str | None,
        agent_id: str,
        write_mode: str,
        metadata: Mapping[str, Any] | None = None,
        key: str | None = None,
    ) -> str | None:
        """Store one memory; returns its id when the write was synchronous. ``key`` (an
        ``Idempotency-Key``) makes a re-send return the first answer instead of a copy."""
        body: dict[str, Any] = {
            "project": self.project,
            "user_id": user_id,
            "agent_id": agent_id,
            "content": content,
            "memory_type": memory_type,
            "importance": importance,
            "write_mode": write_mode,
            **given(session_id=session_id, metadata=dict(metadata or {})),
        }
        headers = {"Idempotency-Key": key} if key else None
        answer = self.client.post(
            "/v1/memory", json_body=body, headers=headers, idempotent=key is not None
        )
        if not isinstance(answer, Mapping) or answer.get("success") is not True:
            raise self._bad("remember", answer)
        memory_id = answer.get("memory_id")
        return memory_id if isinstance(memory_id, str) else None

    def ingest(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Mapping[str, str]],
        *,
        agent_id: str,
        write_mode: str,
        key: str | None = None,
    ) -> None:
        """Send a transcript (``role``, ``content``, ``timestamp``) for memory extraction."""
        body = {
            "project": self.project,
            "session_id": session_id,
            "user_id": user_id,
            "agent_id": agent_id,
            "messages": [dict(m) for m in messages],
            "write_mode": write_mode,
        }
        headers = {"Idempotency-Key": key} if key else None
        answer = self.client.post(
            "/v1/memory/ingest/session",
            json_body=body,
            headers=headers,
            idempotent=key is not None,
        )
        if not isinstance(answer, Mapping) or answer.get("success") is not True:
            raise self._bad("ingest", answer)

    def search(
        self,
        user_id: str,
        query: str,
        *,
        top_k: int,
        profile: str = "fast",
        session_id: str | None = None,
        deadline: float | None = None,
    ) -> list[Memory]:
        """The user's memories relevant to ``query``, best first; memories of anyone else
        (other users, project-wide rows without a user) are dropped."""
        body: dict[str, Any] = {
            "project": self.project,
            "user_id": user_id,
            "query": query,
            "top_k": top_k,
            "include_pending": True,
            "profile": profile,
            **given(session_id=session_id),
        }
        answer = self.client.post(
            "/v1/memory/search", json_body=body, deadline=deadline, idempotent=True
        )
        results = answer.get("results") if isinstance(answer, Mapping) else None
        if not isinstance(results, list):
            raise self._bad("search", answer)
        out: list[Memory] = []
        for item in results:
            if not isinstance(item, Mapping):
                raise self._bad("search", answer)
            memory = _memory(item.get("memory"), item.get("similarity", item.get("score")))
            if memory is None:
                raise self._bad("search", answer)
            if memory.user_id == user_id:
                out.append(memory)
        return out

    def profile(self, user_id: str, *, deadline: float | None = None) -> list[Memory]:
        """The user's profile memories (their own only)."""
        answer = self.client.get(
            f"/v1/memory/profile/{quote(user_id, safe='')}",
            params={"project": self.project, "include_pending": "true"},
            deadline=deadline,
        )
        items = answer.get("memories") if isinstance(answer, Mapping) else None
        if not isinstance(items, list):
            raise self._bad("profile", answer)
        out = []
        for raw in items:
            memory = _memory(raw)
            if memory is None:
                raise self._bad("profile", answer)
            if memory.user_id in (None, user_id):  # the route is already per user
                out.append(memory)
        return out

    def get(self, memory_id: str) -> Memory:
        """One memory by id (raises ServiceNotFound when absent)."""
        answer = self.client.get(f"/v1/memory/{quote(memory_id, safe='')}")
        memory = _memory(answer.get("memory")) if isinstance(answer, Mapping) else None
        if memory is None:
            raise self._bad("get", answer)
        return memory

    def delete(self, memory_id: str) -> None:
        self.client.delete(f"/v1/memory/{quote(memory_id, safe='')}")

    def _bad(self, what: str, answer: Any) -> ServiceBadResponse:
        return ServiceBadResponse(
            f"RetainDB answered {what} with an unexpected body ({repr(answer)[:120]}); is "
            f"{self.client.base_url} the RetainDB API?",
            service=self.client.service,
        )


__all__ = ["Memory", "RetainDBAPI", "idempotency_key"]
