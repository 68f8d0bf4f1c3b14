"""A loopback double of the five Supermemory operations the provider calls, validated
against ``tests/openapi/supermemory-v4.openapi.json`` (see SOURCE.md there).

State lives in memory, per container tag. Supermemory's LLM extraction is stood in for by a
deterministic rule: a document becomes one memory (its user part, for a captured turn), a
conversation's user messages become memories, and a document with ``metadata.type ==
"explicit_memory"`` is a static profile fact. ``customId`` and ``conversationId`` upsert.
Search ranks by shared words / CJK character pairs. Every request must carry
``Authorization: Bearer <api_key>`` (else 401).
"""

from __future__ import annotations

import itertools
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_core.testing.loopback import (
    LoopbackRequest,
    LoopbackServer,
    bearer_guard,
    error_reply,
    match_score,
)

OPENAPI = Path(__file__).parent / "openapi" / "supermemory-v4.openapi.json"
_USER_PART = re.compile(r"\[role: user\]\n(.*?)\n\[user:end\]", re.DOTALL)


def _now() -> str:
    return datetime.now(UTC).isoformat()


class SupermemoryDouble:
    def __init__(self, api_key: str = "test-key") -> None:
        self.api_key = api_key
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.documents: dict[str, dict[str, Any]] = {}
        self.memories: list[dict[str, Any]] = []
        self.conversations: dict[str, dict[str, Any]] = {}
        self.server = LoopbackServer(openapi=OPENAPI, name="supermemory")
        routes = (
            ("POST", "/v3/documents", self.add_document),
            ("POST", "/v4/search", self.search),
            ("POST", "/v4/profile", self.profile),
            ("DELETE", "/v4/memories", self.forget),
            ("POST", "/v4/conversations", self.conversation),
        )
        self.server.route_all(routes, guard=bearer_guard(api_key, "Unauthorized: invalid API key"))

    def _remember(self, tag: str, text: str, source: str, static: bool) -> None:
        text = " ".join(text.split())
        if not text:
            return
        for memory in self.memories:
            if memory["tag"] == tag and memory["memory"] == text:
                memory["source"] = source
                return
        self.memories.append(
            {
                "id": f"mem_{next(self.ids)}",
                "tag": tag,
                "memory": text,
                "source": source,
                "static": static,
                "updatedAt": _now(),
            }
        )

    def _upsert(
        self, table: dict[str, dict[str, Any]], key: str, prefix: str, **fields: Any
    ) -> str:
        """Store ``fields`` under ``key``, keeping the id of what was there; returns the id."""
        known = table.get(key)
        made = known["id"] if known else f"{prefix}_{next(self.ids)}"
        table[key] = {"id": made, **fields}
        return made

    def _forget_source(self, source: str) -> None:
        self.memories = [m for m in self.memories if m["source"] != source]

    # -- handlers

    def add_document(self, req: LoopbackRequest) -> Any:
        body = req.json
        tags = body.get("containerTags") or (
            [body["containerTag"]] if body.get("containerTag") else []
        )
        meta = body.get("metadata") or {}
        with self.lock:
            key = body.get("customId") or f"doc_{next(self.ids)}"
            doc_id = self._upsert(
                self.documents, key, "doc", content=body["content"], tags=tags, metadata=meta
            )
            self._forget_source(doc_id)
            found = _USER_PART.search(body["content"])
            text = found.group(1) if found else body["content"]
            static = meta.get("type") == "explicit_memory"
            for tag in tags:
                self._remember(tag, text, doc_id, static)
            return {"id": doc_id, "status": "queued"}

    def _hits(self, tag: str, query: str, limit: int) -> list[dict[str, Any]]:
        pool = [m for m in self.memories if m["tag"] == tag]
        scored = [(match_score(query, m["memory"]), n, m) for n, m in enumerate(pool)]
        scored = [t for t in scored if t[0] > 0]
        scored.sort(key=lambda t: (-t[0], -t[1]))
        return [
            {
                "id": m["id"],
                "memory": m["memory"],
                "similarity": min(1.0, 0.5 + 0.1 * score),
                "updatedAt": m["updatedAt"],
                "metadata": None,
            }
            for score, _, m in scored[:limit]
        ]

    def search(self, req: LoopbackRequest) -> Any:
        body = req.json
        tag = body.get("containerTag") or ""
        with self.lock:
            hits = self._hits(tag, body["q"], int(body.get("limit", 10)))
            return {"results": hits, "timing": 1.0, "total": len(hits)}

    def profile(self, req: LoopbackRequest) -> Any:
        body = req.json
        tag = body["containerTag"]
        with self.lock:
            mine = [m for m in self.memories if m["tag"] == tag]
            static = [m["memory"] for m in mine if m["static"]]
            dynamic = [m["memory"] for m in mine if not m["static"]][-5:]
            out: dict[str, Any] = {"profile": {"static": static, "dynamic": dynamic}}
            if body.get("q"):
                hits = self._hits(tag, body["q"], 10)
                out["searchResults"] = {"results": hits, "timing": 1.0, "total": len(hits)}
            return out

    def forget(self, req: LoopbackRequest) -> Any:
        body = req.json
        tag = body["containerTag"]
        with self.lock:
            for memory in self.memories:
                if memory["tag"] == tag and (
                    memory["id"] == body.get("id") or memory["memory"] == body.get("content")
                ):
                    self.memories.remove(memory)
                    return {"id": memory["id"], "forgotten": True}
            return error_reply(404, "Memory not found in this container")

    def conversation(self, req: LoopbackRequest) -> Any:
        body = req.json
        tags, meta = body.get("containerTags") or [], body.get("metadata") or {}
        with self.lock:
            key = body["conversationId"]
            conv_id = self._upsert(
                self.conversations, key, "conv", messages=body["messages"], tags=tags, metadata=meta
            )
            for message in body["messages"]:
                if message["role"] == "user" and isinstance(message["content"], str):
                    for tag in tags:
                        self._remember(tag, message["content"], conv_id, False)
            return {"id": conv_id, "conversationId": key, "status": "queued"}
