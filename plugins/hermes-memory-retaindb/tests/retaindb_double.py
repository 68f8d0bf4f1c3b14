"""A loopback double of RetainDB's Memory API v1, validated against
``api/retaindb-memory-v1.openapi.json`` (derived from RetainDB's API reference; see
``api/build_openapi.py`` for the sources).

Behaviour modelled on the reference and the open-source server: memories live in
``(organisation, project)``; writes carry ``user_id`` (USER scope) or none (PROJECT scope);
a search returns the project's PROJECT-scope memories plus the caller's own, ranked by shared
words (each CJK character is a word); ``ingest/session`` extracts each user message as a
``factual`` memory (the real service runs pattern and LLM extraction); ``Idempotency-Key`` on
``POST /v1/memory`` replays the first answer; ``GET``/``DELETE /v1/memory/{id}`` work on any
memory of the organisation, whoever owns it (as the real server does). ``api_key`` makes any
other bearer token answer 401.
"""

from __future__ import annotations

import re
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.testing.loopback import LoopbackRequest, LoopbackServer, reply

OPENAPI = Path(__file__).parent / "api" / "retaindb-memory-v1.openapi.json"
_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)
_STOP = {"the", "a", "an", "is", "my", "i", "do", "what", "which", "me", "you", "of", "to"}


def words(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)} - _STOP


def _error(status: int, code: str, message: str) -> Any:
    return reply({"success": False, "error": {"code": code, "message": message}}, status)


@dataclass
class Stored:
    id: str
    project: str
    content: str
    memory_type: str
    user_id: str | None
    session_id: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    deleted: bool = False

    def as_json(self) -> dict[str, Any]:
        shown = {name: getattr(self, name) for name in ("id", "content", "user_id", "session_id")}
        return {**shown, "type": self.memory_type, "scope": "USER" if self.user_id else "PROJECT"}


class RetainDBDouble:
    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.memories: dict[str, Stored] = {}
        self.idempotent: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.server = LoopbackServer(openapi=OPENAPI, name="retaindb")
        s = self.server
        s.route("POST", "/v1/memory", self._guard(self.write))
        s.route("POST", "/v1/memory/search", self._guard(self.search))
        s.route("POST", "/v1/memory/ingest/session", self._guard(self.ingest))
        s.route("GET", "/v1/memory/profile/{userId}", self._guard(self.profile))
        s.route("GET", "/v1/memory/{memoryId}", self._guard(self.get))
        s.route("DELETE", "/v1/memory/{memoryId}", self._guard(self.delete))

    def _guard(self, handler: Any) -> Any:
        def run(req: LoopbackRequest) -> Any:
            wanted = f"Bearer {self.api_key}"
            if self.api_key is not None and req.headers.get("authorization") != wanted:
                return _error(401, "NOT_AUTHORIZED", "Invalid API key")
            with self._lock:
                return handler(req)

        return run

    def live(self, project: str | None = None) -> list[Stored]:
        return [
            m
            for m in self.memories.values()
            if not m.deleted and (project is None or m.project == project)
        ]

    def add(self, project: str, content: str, user_id: str | None, **kw: Any) -> Stored:
        memory = Stored(
            id=f"mem_{uuid.uuid4().hex[:12]}",
            project=project,
            content=content,
            memory_type=kw.get("memory_type") or "factual",
            user_id=user_id,
            session_id=kw.get("session_id"),
            metadata=dict(kw.get("metadata") or {}),
        )
        self.memories[memory.id] = memory
        return memory

    # -- routes

    def write(self, req: LoopbackRequest) -> Any:
        key = req.headers.get("idempotency-key")
        if key and key in self.idempotent:
            return self.idempotent[key]
        body = req.json
        memory = self.add(
            body.get("project") or "default",
            body["content"],
            body.get("user_id"),
            memory_type=body.get("memory_type"),
            session_id=body.get("session_id"),
            metadata=body.get("metadata"),
        )
        mode = body.get("write_mode", "async")
        if mode == "sync":
            answer = reply(
                {
                    "success": True,
                    "mode": "sync",
                    "trace_id": "trc_double",
                    "memory_id": memory.id,
                    "memory": memory.as_json(),
                },
                201,
            )
        else:
            answer = reply(
                {
                    "success": True,
                    "mode": "async",
                    "trace_id": "trc_double",
                    "job_id": f"job_{uuid.uuid4().hex[:8]}",
                },
                202,
            )
        if key:
            self.idempotent[key] = answer
        return answer

    def search(self, req: LoopbackRequest) -> Any:
        body = req.json
        project = body.get("project") or "default"
        user = body.get("user_id")
        query = words(body["query"])
        scored = []
        for memory in self.live(project):
            if memory.user_id is not None and memory.user_id != user:
                continue
            score = len(query & words(memory.content))
            if score:
                scored.append((score, memory))
        scored.sort(key=lambda t: -t[0])
        top = scored[: int(body.get("top_k", 10))]
        results = [
            {"memory": m.as_json(), "similarity": round(s / max(len(query), 1), 4)} for s, m in top
        ]
        return {"results": results, "count": len(results), "trace_id": "trc_double"}

    def ingest(self, req: LoopbackRequest) -> Any:
        body = req.json
        project = body.get("project") or "default"
        created = 0
        for message in body["messages"]:
            if message["role"] == "user" and message["content"].strip():
                self.add(
                    project,
                    message["content"].strip(),
                    body.get("user_id"),
                    session_id=body["session_id"],
                )
                created += 1
        mode = body.get("write_mode", "async")
        if mode == "sync":
            return {
                "success": True,
                "mode": "sync",
                "session_id": body["session_id"],
                "memories_created": created,
            }
        return reply({"success": True, "mode": "async", "session_id": body["session_id"]}, 202)

    def profile(self, req: LoopbackRequest) -> Any:
        user = req.path_params["userId"]
        project = req.arg("project") or "default"
        items = [m.as_json() for m in self.live(project) if m.user_id == user]
        return {"user_id": user, "memories": items}

    def get(self, req: LoopbackRequest) -> Any:
        memory = self.memories.get(req.path_params["memoryId"])
        if memory is None or memory.deleted:
            return _error(404, "MEMORY_NOT_FOUND", "Memory not found")
        return {
            "success": True,
            "memory_id": memory.id,
            "memory": {**memory.as_json(), "project_id": memory.project},
        }

    def delete(self, req: LoopbackRequest) -> Any:
        memory = self.memories.get(req.path_params["memoryId"])
        if memory is None or memory.deleted:
            return reply({"error": "Memory not found"}, 404)
        memory.deleted = True
        return {"success": True, "message": "Memory deleted", "memory_id": memory.id}


__all__ = ["OPENAPI", "RetainDBDouble", "words"]
