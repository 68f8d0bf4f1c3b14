"""A loopback server implementing the documented mem0 REST routes, for host/platform tests.

``flavor="host"`` serves the self-hosted server routes (``/memories``, ``/search``, auth by
``X-API-Key``); ``flavor="platform"`` serves the Platform routes (``/v1/memories/``,
``/v2/memories/``, ``/v2/memories/search/``, auth by ``Authorization: Token``). Memories are
kept in memory; search ranks by shared words (CJK characters count as words) and filters by
``user_id`` like the real service. ``fail_next(n, status)`` makes the next ``n`` requests
fail with ``status``. Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)


def tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    headers: dict[str, str]


class FakeMem0Server:
    def __init__(self, flavor: str = "host", api_key: str | None = None) -> None:
        assert flavor in ("host", "platform")
        self.flavor = flavor
        self.api_key = api_key
        self.memories: dict[str, dict[str, Any]] = {}
        self.requests: list[Recorded] = []
        self._fail: list[int] = []
        self.delay = 0.0  # seconds every request waits before it is answered
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # lifecycle
    def __enter__(self) -> FakeMem0Server:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(self, n: int, status: int = 500) -> None:
        with self._lock:
            self._fail.extend([status] * n)

    # behaviour
    def authorised(self, headers: Mapping[str, str]) -> bool:
        if self.api_key is None:
            return True
        if self.flavor == "host":
            return headers.get("x-api-key") == self.api_key
        return headers.get("authorization") == f"Token {self.api_key}"

    def add(self, body: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(body.get("messages"), list) or not body.get("user_id"):
            raise ValueError("messages and user_id are required")
        results = []
        for msg in body["messages"]:
            content = str(msg.get("content", "")).strip()
            if not content:
                continue
            mem_id = str(uuid.uuid4())
            self.memories[mem_id] = {
                "id": mem_id,
                "memory": content,
                "user_id": body["user_id"],
                "agent_id": body.get("agent_id"),
                "metadata": body.get("metadata") or {},
                "infer": body.get("infer"),
            }
            results.append({"id": mem_id, "memory": content, "event": "ADD"})
        return {"results": results}

    def search(self, query: str, user_id: str | None, top_k: int) -> list[dict[str, Any]]:
        if not user_id:
            raise ValueError("user_id filter is required")
        q = tokens(query)
        scored = []
        for mem in self.memories.values():
            if mem["user_id"] != user_id:
                continue
            overlap = len(q & tokens(mem["memory"]))
            if overlap:
                scored.append({**mem, "score": overlap / max(1, len(q))})
        scored.sort(key=lambda m: -m["score"])
        return scored[:top_k]


def _handler(owner: FakeMem0Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            parsed = urlparse(self.path)
            with owner._lock:
                owner.requests.append(Recorded(method, parsed.path, body, headers))
                fail = owner._fail.pop(0) if owner._fail else None
            if owner.delay:
                time.sleep(owner.delay)
            if fail is not None:
                self._send(fail, {"detail": "injected failure"})
                return
            if not owner.authorised(headers):
                self._send(401, {"detail": "unauthorised"})
                return
            try:
                with owner._lock:
                    status, payload = route(method, parsed.path, parse_qs(parsed.query), body)
            except ValueError as exc:
                status, payload = 422, {"detail": str(exc)}
            self._send(status, payload)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PUT(self) -> None:
            self._handle("PUT")

        def do_DELETE(self) -> None:
            self._handle("DELETE")

    def one(mem_id: str, method: str, body: Any) -> tuple[int, Any]:
        mem = owner.memories.get(mem_id)
        if mem is None:
            return 404, {"detail": "Memory not found"}
        if method == "GET":
            return 200, mem
        if method == "PUT":
            if not isinstance(body, dict) or not isinstance(body.get("text"), str):
                raise ValueError("text is required")
            mem["memory"] = body["text"]
            return 200, {"message": "Memory updated successfully!"}
        if method == "DELETE":
            del owner.memories[mem_id]
            return 200, {"message": "Memory deleted successfully!"}
        return 405, {"detail": "method not allowed"}

    def route(method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        body = body if isinstance(body, dict) else {}
        if owner.flavor == "host":
            if path == "/memories" and method == "POST":
                return 200, owner.add(body)
            if path == "/memories" and method == "GET":
                uid = (query.get("user_id") or [None])[0]
                rows = [m for m in owner.memories.values() if m["user_id"] == uid]
                return 200, {"results": rows}
            if path == "/search" and method == "POST":
                uid = body.get("user_id") or (body.get("filters") or {}).get("user_id")
                rows = owner.search(str(body.get("query", "")), uid, int(body.get("top_k", 10)))
                return 200, {"results": rows}
            m = re.fullmatch(r"/memories/([^/]+)", path)
            if m:
                return one(unquote(m.group(1)), method, body)
            return 404, {"detail": "no route"}
        if path == "/v1/memories/" and method == "POST":
            return 200, owner.add(body)["results"]
        if path == "/v2/memories/search/" and method == "POST":
            uid = (body.get("filters") or {}).get("user_id")
            return 200, owner.search(str(body.get("query", "")), uid, int(body.get("top_k", 10)))
        if path == "/v2/memories/" and method == "POST":
            uid = (body.get("filters") or {}).get("user_id")
            if not uid:
                raise ValueError("filters.user_id is required")
            return 200, [m for m in owner.memories.values() if m["user_id"] == uid]
        m = re.fullmatch(r"/v1/memories/([^/]+)/", path)
        if m:
            return one(unquote(m.group(1)), method, body)
        return 404, {"detail": "no route"}

    return Handler
