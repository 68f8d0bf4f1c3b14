"""A loopback double of the Honcho v3 API: the 15 operations the provider calls, served on
127.0.0.1 and validated against Honcho's published OpenAPI document
(``tests/openapi/honcho-v3.openapi.json``; see SOURCE.md there).

State lives in memory. What Honcho's deriver does with an LLM is stood in for by a
deterministic rule: every message a peer writes becomes an ``explicit`` conclusion by each
observing peer (``observe_me`` for itself, ``observe_others`` for the others in the session).
Search and the dialectic rank by shared words / CJK character pairs
(:func:`hermes_core.testing.loopback.match_score`). Every request must carry
``Authorization: Bearer <api_key>`` when the double has a key (else 401, like Honcho).
"""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_core.testing.loopback import (
    LoopbackRequest,
    LoopbackResponse,
    LoopbackServer,
    bearer_guard,
    error_reply,
    match_score,
    reply,
)

OPENAPI = Path(__file__).parent / "openapi" / "honcho-v3.openapi.json"
W = "/v3/workspaces/{workspace_id}"


def _now() -> str:
    return datetime.now(UTC).isoformat()


class HonchoDouble:
    """State + handlers, served by :attr:`server` (a :class:`LoopbackServer`, not started)."""

    def __init__(self, api_key: str | None = "test-key") -> None:
        self.api_key = api_key
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.workspaces: dict[str, dict[str, Any]] = {}
        self.peers: dict[tuple[str, str], dict[str, Any]] = {}
        self.sessions: dict[tuple[str, str], dict[str, Any]] = {}
        self.session_peers: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.messages: list[dict[str, Any]] = []
        self.conclusions: list[dict[str, Any]] = []
        self.cards: dict[tuple[str, str, str], list[str]] = {}
        self.server = self._server()

    # -- helpers

    def _next(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids)}"

    def _peer(self, ws: str, peer_id: str) -> dict[str, Any] | None:
        return self.peers.get((ws, peer_id))

    def _message_out(self, m: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in m.items() if not k.startswith("_")}

    def _ranked(self, items: list[dict[str, Any]], query: str, limit: int) -> list[dict[str, Any]]:
        scored = [(match_score(query, str(i["content"])), n, i) for n, i in enumerate(items)]
        hits = [t for t in scored if t[0] > 0]
        hits.sort(key=lambda t: (-t[0], -t[1]))
        return [i for _, _, i in hits[:limit]]

    def _representation(self, ws: str, observer: str, observed: str, query: str | None) -> str:
        mine = [
            c
            for c in self.conclusions
            if c["workspace_id"] == ws
            and c["observer_id"] == observer
            and c["observed_id"] == observed
        ]
        chosen = self._ranked(mine, query, 10) if query else mine[-10:]
        return "\n".join(f"- {c['content']}" for c in chosen)

    # -- handlers

    def workspace(self, req: LoopbackRequest) -> Any:
        with self.lock:
            ws = req.json["id"]
            made = self.workspaces.setdefault(
                ws, {"id": ws, "metadata": {}, "configuration": {}, "created_at": _now()}
            )
            return made

    def _record(self, ws: str, rid: str, metadata: Any, **extra: Any) -> dict[str, Any]:
        """A new peer or session as Honcho answers it."""
        return {
            "id": rid,
            "workspace_id": ws,
            "created_at": _now(),
            "metadata": metadata or {},
            "configuration": {},
            **extra,
        }

    def peer(self, req: LoopbackRequest) -> Any:
        ws, pid = req.path_params["workspace_id"], req.json["id"]
        with self.lock:
            if ws not in self.workspaces:
                return error_reply(404, f"workspace {ws} not found")
            return self.peers.setdefault((ws, pid), self._record(ws, pid, req.json.get("metadata")))

    def session(self, req: LoopbackRequest) -> Any:
        ws, sid = req.path_params["workspace_id"], req.json["id"]
        with self.lock:
            if ws not in self.workspaces:
                return error_reply(404, f"workspace {ws} not found")
            made = self.sessions.setdefault(
                (ws, sid), self._record(ws, sid, req.json.get("metadata"), is_active=True)
            )
            members = self.session_peers.setdefault((ws, sid), {})
            for pid, cfg in (req.json.get("peers") or {}).items():
                self.peers.setdefault((ws, pid), self._record(ws, pid, {}))
                members[pid] = dict(cfg or {})
            return made

    def add_messages(self, req: LoopbackRequest) -> Any:
        ws, sid = req.path_params["workspace_id"], req.path_params["session_id"]
        with self.lock:
            if (ws, sid) not in self.sessions:
                return error_reply(404, f"session {sid} not found")
            members = self.session_peers[(ws, sid)]
            out = []
            for item in req.json["messages"]:
                author = item["peer_id"]
                if (ws, author) not in self.peers:
                    return error_reply(404, f"peer {author} not found")
                message = {
                    "id": self._next("msg"),
                    "content": item["content"],
                    "peer_id": author,
                    "session_id": sid,
                    "metadata": item.get("metadata") or {},
                    "created_at": _now(),
                    "workspace_id": ws,
                    "token_count": max(1, len(item["content"]) // 4),
                }
                self.messages.append(message)
                out.append(message)
                observers = [
                    pid
                    for pid, cfg in members.items()
                    if (pid == author and cfg.get("observe_me", True))
                    or (pid != author and cfg.get("observe_others"))
                ]
                for observer in observers:
                    self.conclusions.append(
                        {
                            "id": self._next("con"),
                            "content": item["content"],
                            "observer_id": observer,
                            "observed_id": author,
                            "session_id": sid,
                            "level": "explicit",
                            "created_at": _now(),
                            "workspace_id": ws,
                        }
                    )
            return reply(out, status=201)

    def peer_context(self, req: LoopbackRequest) -> Any:
        ws, pid = req.path_params["workspace_id"], req.path_params["peer_id"]
        target = req.arg("target") or pid
        with self.lock:
            if self._peer(ws, pid) is None or self._peer(ws, target) is None:
                return error_reply(404, "peer not found")
            return {
                "peer_id": pid,
                "target_id": target,
                "representation": self._representation(ws, pid, target, req.arg("search_query"))
                or None,
                "peer_card": self.cards.get((ws, pid, target)),
            }

    def peer_search(self, req: LoopbackRequest) -> Any:
        ws, pid = req.path_params["workspace_id"], req.path_params["peer_id"]
        with self.lock:
            if self._peer(ws, pid) is None:
                return error_reply(404, "peer not found")
            mine = [m for m in self.messages if m["workspace_id"] == ws and m["peer_id"] == pid]
            found = self._ranked(mine, req.json["query"], int(req.json.get("limit", 10)))
            return [self._message_out(m) for m in found]

    def session_search(self, req: LoopbackRequest) -> Any:
        ws, sid = req.path_params["workspace_id"], req.path_params["session_id"]
        with self.lock:
            if (ws, sid) not in self.sessions:
                return error_reply(404, "session not found")
            peer = (req.json.get("filters") or {}).get("peer_id")
            mine = [
                m
                for m in self.messages
                if m["workspace_id"] == ws
                and m["session_id"] == sid
                and (peer is None or m["peer_id"] == peer)
            ]
            found = self._ranked(mine, req.json["query"], int(req.json.get("limit", 10)))
            return [self._message_out(m) for m in found]

    def chat(self, req: LoopbackRequest) -> Any:
        ws, pid = req.path_params["workspace_id"], req.path_params["peer_id"]
        target = req.json.get("target") or pid
        with self.lock:
            if self._peer(ws, pid) is None or self._peer(ws, target) is None:
                return error_reply(404, "peer not found")
            text = self._representation(ws, pid, target, req.json["query"])
            return {"content": text or None}

    def card(self, req: LoopbackRequest) -> Any:
        """GET reads, PUT replaces the card ``peer_id`` keeps on ``target`` (itself)."""
        ws, pid = req.path_params["workspace_id"], req.path_params["peer_id"]
        key = (ws, pid, req.arg("target") or pid)
        with self.lock:
            if self._peer(ws, pid) is None:
                return error_reply(404, "peer not found")
            if req.method == "PUT":
                self.cards[key] = list(req.json["peer_card"])
            return {"peer_card": self.cards.get(key)}

    def session_context(self, req: LoopbackRequest) -> Any:
        ws, sid = req.path_params["workspace_id"], req.path_params["session_id"]
        with self.lock:
            if (ws, sid) not in self.sessions:
                return error_reply(404, "session not found")
            messages = [
                m for m in self.messages if m["workspace_id"] == ws and m["session_id"] == sid
            ]
            perspective, target = req.arg("peer_perspective"), req.arg("peer_target")
            observer = perspective or target
            observed = target or perspective
            body: dict[str, Any] = {
                "id": sid,
                "messages": [self._message_out(m) for m in messages[-50:]],
                "summary": None,
            }
            if observer and observed:
                body["peer_representation"] = (
                    self._representation(ws, observer, observed, None) or None
                )
                body["peer_card"] = self.cards.get((ws, observer, observed))
            return body

    def create_conclusions(self, req: LoopbackRequest) -> Any:
        ws = req.path_params["workspace_id"]
        with self.lock:
            out = []
            for item in req.json["conclusions"]:
                for key in ("observer_id", "observed_id"):
                    if (ws, item[key]) not in self.peers:
                        return error_reply(404, f"peer {item[key]} not found")
                made = {
                    "id": self._next("con"),
                    "content": item["content"],
                    "observer_id": item["observer_id"],
                    "observed_id": item["observed_id"],
                    "session_id": item.get("session_id"),
                    "level": "explicit",
                    "created_at": _now(),
                    "workspace_id": ws,
                }
                self.conclusions.append(made)
                out.append({k: v for k, v in made.items() if k != "workspace_id"})
            return reply(out, status=201)

    def _filtered(self, ws: str, filters: dict[str, Any] | None) -> list[dict[str, Any]]:
        filters = filters or {}
        return [
            c
            for c in self.conclusions
            if c["workspace_id"] == ws and all(c.get(k) == v for k, v in filters.items())
        ]

    def query_conclusions(self, req: LoopbackRequest) -> Any:
        ws = req.path_params["workspace_id"]
        with self.lock:
            pool = self._filtered(ws, req.json.get("filters"))
            found = self._ranked(pool, req.json["query"], int(req.json.get("top_k", 10)))
            return [{k: v for k, v in c.items() if k != "workspace_id"} for c in found]

    def list_conclusions(self, req: LoopbackRequest) -> Any:
        ws = req.path_params["workspace_id"]
        page = int(req.arg("page") or 1)
        size = int(req.arg("size") or 50)
        with self.lock:
            pool = self._filtered(ws, (req.json or {}).get("filters"))
            if req.arg("reverse") == "true":
                pool = list(reversed(pool))
            items = pool[(page - 1) * size : page * size]
            pages = max(1, -(-len(pool) // size))
            return {
                "items": [{k: v for k, v in c.items() if k != "workspace_id"} for c in items],
                "total": len(pool),
                "page": page,
                "size": size,
                "pages": pages,
            }

    def delete_conclusion(self, req: LoopbackRequest) -> Any:
        ws, cid = req.path_params["workspace_id"], req.path_params["conclusion_id"]
        with self.lock:
            before = len(self.conclusions)
            self.conclusions = [
                c for c in self.conclusions if not (c["workspace_id"] == ws and c["id"] == cid)
            ]
            if len(self.conclusions) == before:
                return error_reply(404, "conclusion not found")
            return LoopbackResponse(status=204)

    # -- server

    def _server(self) -> LoopbackServer:
        made = LoopbackServer(openapi=OPENAPI, name="honcho")
        routes = [
            ("POST", "/v3/workspaces", self.workspace),
            ("POST", f"{W}/peers", self.peer),
            ("POST", f"{W}/sessions", self.session),
            ("POST", f"{W}/sessions/{{session_id}}/messages", self.add_messages),
            ("GET", f"{W}/peers/{{peer_id}}/context", self.peer_context),
            ("POST", f"{W}/peers/{{peer_id}}/search", self.peer_search),
            ("POST", f"{W}/sessions/{{session_id}}/search", self.session_search),
            ("POST", f"{W}/peers/{{peer_id}}/chat", self.chat),
            ("GET", f"{W}/peers/{{peer_id}}/card", self.card),
            ("PUT", f"{W}/peers/{{peer_id}}/card", self.card),
            ("GET", f"{W}/sessions/{{session_id}}/context", self.session_context),
            ("POST", f"{W}/conclusions", self.create_conclusions),
            ("POST", f"{W}/conclusions/query", self.query_conclusions),
            ("POST", f"{W}/conclusions/list", self.list_conclusions),
            ("DELETE", f"{W}/conclusions/{{conclusion_id}}", self.delete_conclusion),
        ]
        made.route_all(routes, guard=bearer_guard(self.api_key))
        return made
