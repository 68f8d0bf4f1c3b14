"""Loopback doubles of the services behind two real third-party Hermes Agent providers.

Both are written from the endpoints, bodies and response shapes their registry packages use
(``hermes-memoryrouter`` 0.1.1: ``POST /v1/memory/ingest`` and ``/v1/memory/prepare``, bearer
key; ``hermes-memra`` 4.5.0: ``POST /memories``, ``POST /memories/recall`` → ``{"data": []}``,
``GET /memories`` → ``{"memories": []}``, ``GET /memories/{id}``, scoped by
``tenant_id``/``project_id``). Neither service publishes an OpenAPI document we can read
offline, so requests are checked here by hand (auth header, required fields) and a bad one
is answered 400 and recorded in ``violations``. Recall is naive: every stored text sharing a
word (or, for CJK, a character pair) with the query, newest first.
"""

from __future__ import annotations

import itertools
import re
import threading
from typing import Any

from hermes_core.testing.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer

_CJK = re.compile(r"[\u3400-\u9fff]")


def _terms(text: str) -> set[str]:
    words = {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}
    chars = "".join(_CJK.findall(text))
    return words | {chars[i : i + 2] for i in range(len(chars) - 1)}


def matches(query: str, text: str) -> bool:
    return bool(_terms(query) & _terms(text))


class MemoryRouterDouble:
    """MemoryRouter's two endpoints; memories are keyed by API key (one vault per key)."""

    def __init__(self, server: LoopbackServer, api_key: str) -> None:
        self.server = server
        self.api_key = api_key
        self.stored: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self._lock = threading.Lock()
        server.route("POST", "/v1/memory/ingest", self.ingest)
        server.route("POST", "/v1/memory/prepare", self.prepare)

    def _check(self, req: LoopbackRequest) -> str | None:
        if req.headers.get("authorization") != f"Bearer {self.api_key}":
            return "missing or wrong bearer key"
        body = req.json
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return "body must be an object with a messages list"
        for m in body["messages"]:
            if m.get("role") not in {"user", "assistant"} or not isinstance(m.get("content"), str):
                return f"bad message {m!r}"
        return None

    def _reject(self, reason: str) -> LoopbackResponse:
        self.violations.append(reason)
        return LoopbackResponse(400, {"error": reason})

    def ingest(self, req: LoopbackRequest) -> LoopbackResponse:
        if problem := self._check(req):
            return self._reject(problem)
        with self._lock:
            self.stored.append(
                {"messages": req.json["messages"], "session": req.headers.get("x-session-id")}
            )
        return LoopbackResponse(202, {"accepted": True})

    def prepare(self, req: LoopbackRequest) -> LoopbackResponse:
        if problem := self._check(req):
            return self._reject(problem)
        query = req.json["messages"][-1]["content"]
        with self._lock:
            hits = [
                m["content"]
                for item in reversed(self.stored)
                for m in item["messages"]
                if m["role"] == "user" and matches(query, m["content"])
            ]
        return LoopbackResponse(
            200, {"context": "\n".join(f"- {h}" for h in hits), "memories_found": len(hits)}
        )


class MemraDouble:
    """Memra's REST contract; rows are scoped by (project_id, tenant_id)."""

    def __init__(self, server: LoopbackServer, api_key: str) -> None:
        self.server = server
        self.api_key = api_key
        self.rows: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        server.route("POST", "/memories", self.add)
        server.route("POST", "/memories/recall", self.recall)
        server.route("GET", "/memories", self.list)
        server.route("GET", "/memories/{memory_id}", self.get)

    def _auth(self, req: LoopbackRequest) -> LoopbackResponse | None:
        if req.headers.get("authorization") != f"Bearer {self.api_key}":
            self.violations.append("missing or wrong bearer key")
            return LoopbackResponse(401, {"error": "unauthorized"})
        return None

    def _scoped(self, project: str | None, tenant: str | None) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["project_id"] == project and r["tenant_id"] == tenant]

    def add(self, req: LoopbackRequest) -> LoopbackResponse:
        if denied := self._auth(req):
            return denied
        body = req.json if isinstance(req.json, dict) else {}
        missing = [k for k in ("content", "tenant_id", "project_id", "type") if not body.get(k)]
        if missing:
            self.violations.append(f"add without {missing}")
            return LoopbackResponse(400, {"error": f"missing {missing}"})
        with self._lock:
            row = {**body, "id": f"mem_{next(self._ids)}", "status": "active"}
            self.rows.append(row)
        return LoopbackResponse(201, {"id": row["id"]})

    def recall(self, req: LoopbackRequest) -> LoopbackResponse:
        if denied := self._auth(req):
            return denied
        body = req.json if isinstance(req.json, dict) else {}
        if not body.get("query") or not body.get("tenant_id") or not body.get("project_id"):
            self.violations.append(f"recall without query/tenant/project: {body!r}")
            return LoopbackResponse(400, {"error": "query, tenant_id and project_id required"})
        with self._lock:
            rows = [
                r
                for r in reversed(self._scoped(body["project_id"], body["tenant_id"]))
                if matches(body["query"], r["content"])
            ][: int(body.get("limit") or 10)]
        data = [
            {
                "id": r["id"],
                "content": r["content"],
                "score": 0.9,
                "importance": r.get("importance"),
            }
            for r in rows
        ]
        return LoopbackResponse(200, {"data": data, "meta": {}, "estimated_tokens": 0})

    def list(self, req: LoopbackRequest) -> LoopbackResponse:
        if denied := self._auth(req):
            return denied
        with self._lock:
            rows = self._scoped(req.arg("project_id"), req.arg("tenant_id"))
        index = [{k: v for k, v in r.items() if k != "content"} for r in rows]
        return LoopbackResponse(200, {"memories": index})

    def get(self, req: LoopbackRequest) -> LoopbackResponse:
        if denied := self._auth(req):
            return denied
        with self._lock:
            row = next((r for r in self.rows if r["id"] == req.path_params["memory_id"]), None)
        return LoopbackResponse(200, row) if row else LoopbackResponse(404, {"error": "not found"})

    def contents(self, tenant: str | None = None) -> list[str]:
        with self._lock:
            return [r["content"] for r in self.rows if tenant is None or r["tenant_id"] == tenant]
