"""A loopback double of the OpenViking HTTP server (API v1 as served by openviking 0.5.2).

It implements the endpoints the provider uses, on a real socket, and the kit validates every
request against ``openapi/openviking-0.5.2.openapi.json`` (the document the real server
serves at ``/openapi.json``; see ``openapi/SOURCE.md``). Behaviour copied from the real
server, checked by ``test_openviking_real_server.py``:

* api_key mode: a user key (``user_keys``) names its account and user, tenant headers are
  ignored;
* trusted mode: ``X-API-Key`` must equal the root key; ``X-OpenViking-Account`` and
  ``X-OpenViking-User`` name the caller; ``viking://~/`` is the caller's
  ``viking://user/<user>/``; every user sees only their own space plus the account-wide
  ``viking://resources/``;
* envelopes ``{"status": "ok", "result": ...}`` and
  ``{"status": "error", "error": {"code", "message"}}``; ``content/write`` with
  ``mode: create`` on an existing file is a 409 ``ALREADY_EXISTS``;
* ``search/find`` ranks files by shared words (and shared Chinese character pairs) with the
  query — the real server ranks by embeddings;
* ``sessions/{id}/commit`` stands in for the server's LLM extraction: each user message of
  the committed batch becomes one memory file under ``memories/events/``.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.testing.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer

OPENAPI = Path(__file__).parent / "openapi" / "openviking-0.5.2.openapi.json"
ROOT_KEY = "root-test-key"

_WORD = re.compile(r"[a-z0-9]{2,}")
_CJK = re.compile(r"[\u3400-\u9fff]")
_STOP = {"the", "is", "my", "what", "which", "do", "and", "to", "of", "that", "please", "me"}


def tokens(text: str) -> set[str]:
    words = {w for w in _WORD.findall(text.lower()) if w not in _STOP}
    chars = _CJK.findall(text)
    pairs = {a + b for a, b in itertools.pairwise(chars)}
    return words | pairs


def envelope(result: Any) -> dict[str, Any]:
    return {"status": "ok", "result": result}


def error(status: int, code: str, message: str) -> LoopbackResponse:
    return LoopbackResponse(
        status=status, json={"status": "error", "error": {"code": code, "message": message}}
    )


@dataclass
class Tenant:
    files: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)


class OpenVikingDouble:
    """State of the double; :meth:`server` builds the routed :class:`LoopbackServer`."""

    def __init__(
        self,
        root_key: str | None = ROOT_KEY,
        user_keys: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        self.root_key = root_key
        self.user_keys = dict(user_keys or {})  # api_key mode: key -> (account, user)
        self.tenants: dict[tuple[str, str], Tenant] = {}
        self.shared: dict[str, dict[str, str]] = {}  # account -> resources files
        self._lock = threading.Lock()

    # -- identity

    def caller(self, req: LoopbackRequest) -> tuple[str, str] | LoopbackResponse:
        key = req.headers.get("x-api-key")
        if key in self.user_keys:  # a user key names its user; tenant headers are ignored
            return self.user_keys[key]
        if self.root_key is not None and req.headers.get("x-api-key") != self.root_key:
            return error(401, "UNAUTHENTICATED", "Invalid API Key in trusted mode.")
        account = req.headers.get("x-openviking-account")
        user = req.headers.get("x-openviking-user")
        if not account or not user:
            return error(
                400,
                "INVALID_ARGUMENT",
                "Trusted mode requests must include X-OpenViking-Account and X-OpenViking-User.",
            )
        return account, user

    def tenant(self, account: str, user: str) -> Tenant:
        return self.tenants.setdefault((account, user), Tenant())

    @staticmethod
    def expand(uri: str, user: str) -> str:
        if uri.startswith("viking://~"):
            return f"viking://user/{user}" + uri[len("viking://~") :]
        return uri

    def visible(self, account: str, user: str) -> dict[str, str]:
        own = dict(self.tenant(account, user).files)
        own.update(self.shared.get(account, {}))
        return own

    # -- handlers

    def _with_caller(self, fn: Any) -> Any:
        def handler(req: LoopbackRequest) -> Any:
            who = self.caller(req)
            if isinstance(who, LoopbackResponse):
                return who
            with self._lock:
                return fn(req, *who)

        return handler

    def write(self, req: LoopbackRequest, account: str, user: str) -> Any:
        body = req.json or {}
        uri = self.expand(str(body.get("uri", "")), user)
        if not uri.startswith(f"viking://user/{user}/") and not uri.startswith(
            "viking://resources/"
        ):
            return error(403, "PERMISSION_DENIED", f"cannot write {uri}")
        files = (
            self.shared.setdefault(account, {})
            if uri.startswith("viking://resources/")
            else self.tenant(account, user).files
        )
        mode = body.get("mode", "replace")
        if mode == "create" and uri in files:
            return error(409, "ALREADY_EXISTS", f"File already exists: {uri}")
        content = str(body.get("content", ""))
        files[uri] = files.get(uri, "") + content if mode == "append" else content
        return envelope(
            {
                "uri": uri,
                "mode": mode,
                "written_bytes": len(content.encode()),
                "context_type": "memory" if "/memories/" in uri else "resource",
            }
        )

    def find(self, req: LoopbackRequest, account: str, user: str) -> Any:
        body = req.json or {}
        query = tokens(str(body.get("query", "")))
        limit = int(body.get("limit", 10))
        threshold = body.get("score_threshold") or 0.0
        kinds = body.get("context_type") or ["memory", "resource"]
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        targets = body.get("target_uri") or ""
        targets = [targets] if isinstance(targets, str) else list(targets)
        targets = [self.expand(t, user) for t in targets if t]
        memories, resources = [], []
        for uri, content in self.visible(account, user).items():
            if targets and not any(uri.startswith(t) for t in targets):
                continue
            kind = "memory" if "/memories/" in uri else "resource"
            if kind not in kinds or not query:
                continue
            score = len(query & tokens(content)) / len(query)
            if score <= 0 or score < float(threshold):
                continue
            item = {
                "context_type": kind,
                "uri": uri,
                "level": 2,
                "score": score,
                "abstract": content[:400],
                "tags": [],
            }
            (memories if kind == "memory" else resources).append(item)
        memories.sort(key=lambda i: -i["score"])
        resources.sort(key=lambda i: -i["score"])
        memories, resources = memories[:limit], resources[:limit]
        return envelope(
            {
                "memories": memories,
                "resources": resources,
                "skills": [],
                "total": len(memories) + len(resources),
            }
        )

    def read(self, req: LoopbackRequest, account: str, user: str) -> Any:
        uri = self.expand(req.arg("uri") or "", user)
        files = self.visible(account, user)
        if uri in files:
            return envelope(files[uri])
        return error(404, "NOT_FOUND", f"File not found: {uri}")

    def summary(self, req: LoopbackRequest, account: str, user: str) -> Any:
        uri = self.expand(req.arg("uri") or "", user).rstrip("/")
        children = [u for u in self.visible(account, user) if u.startswith(uri + "/")]
        if not children:
            return error(404, "NOT_FOUND", f"Directory not found: {uri}")
        return envelope(f"# {uri}\n" + "\n".join(f"- {c}" for c in sorted(children)[:20]))

    def _entries(self, uri: str, files: dict[str, str], recursive: bool) -> list[dict[str, Any]]:
        base = uri.rstrip("/")
        seen: dict[str, dict[str, Any]] = {}
        for path in sorted(files):
            if not path.startswith(base + "/"):
                continue
            rest = path[len(base) + 1 :].split("/")
            depth = len(rest) if recursive else 1
            for i in range(min(depth, len(rest))):
                child = base + "/" + "/".join(rest[: i + 1])
                is_dir = i < len(rest) - 1
                seen.setdefault(
                    child,
                    {
                        "uri": child,
                        "size": 0 if is_dir else len(files[path]),
                        "isDir": is_dir,
                        "rel_path": "/".join(rest[: i + 1]),
                        "abstract": "",
                    },
                )
        return list(seen.values())

    def ls(self, req: LoopbackRequest, account: str, user: str) -> Any:
        uri = self.expand(req.arg("uri") or "viking://", user)
        return envelope(self._entries(uri, self.visible(account, user), recursive=False))

    def tree(self, req: LoopbackRequest, account: str, user: str) -> Any:
        uri = self.expand(req.arg("uri") or "viking://", user)
        return envelope(self._entries(uri, self.visible(account, user), recursive=True))

    def stat(self, req: LoopbackRequest, account: str, user: str) -> Any:
        uri = self.expand(req.arg("uri") or "", user)
        files = self.visible(account, user)
        if uri in files:
            return envelope({"uri": uri, "isDir": False, "size": len(files[uri])})
        if any(u.startswith(uri.rstrip("/") + "/") for u in files):
            return envelope({"uri": uri, "isDir": True, "size": 0})
        return error(404, "NOT_FOUND", f"Not found: {uri}")

    def delete(self, req: LoopbackRequest, account: str, user: str) -> Any:
        uri = self.expand(req.arg("uri") or "", user)
        files = self.tenant(account, user).files
        if uri not in files:
            return error(404, "NOT_FOUND", f"Not found: {uri}")
        del files[uri]
        return envelope({"uri": uri})

    def batch(self, req: LoopbackRequest, account: str, user: str) -> Any:
        sid = req.path_params["session_id"]
        messages = list((req.json or {}).get("messages") or [])
        pending = self.tenant(account, user).sessions.setdefault(sid, [])
        pending.extend(messages)
        return envelope({"session_id": sid, "message_count": len(pending), "added": len(messages)})

    def commit(self, req: LoopbackRequest, account: str, user: str) -> Any:
        sid = req.path_params["session_id"]
        tenant = self.tenant(account, user)
        pending = tenant.sessions.pop(sid, [])
        for message in pending:
            if message.get("role") != "user":
                continue
            text = " ".join(
                str(p.get("text", "")) for p in message.get("parts") or [] if isinstance(p, dict)
            ).strip()
            if text:
                digest = hashlib.sha256(text.encode()).hexdigest()[:12]
                tenant.files[f"viking://user/{user}/memories/events/mem_{digest}.md"] = text
        tenant.commits.append(sid)
        return envelope(
            {
                "session_id": sid,
                "status": "accepted",
                "archived": bool(pending),
                "task_id": f"task-{len(tenant.commits)}",
            }
        )

    def session(self, req: LoopbackRequest, account: str, user: str) -> Any:
        sid = req.path_params["session_id"]
        pending = self.tenant(account, user).sessions.get(sid, [])
        return envelope({"session_id": sid, "message_count": len(pending)})

    def add_resource(self, req: LoopbackRequest, account: str, user: str) -> Any:
        body = req.json or {}
        target = body.get("to") or (str(body.get("parent", "viking://resources")) + "/page")
        root = self.expand(str(target), user)
        files = (
            self.shared.setdefault(account, {})
            if root.startswith("viking://resources")
            else self.tenant(account, user).files
        )
        files[root + "/index.md"] = f"Fetched from {body.get('path')}"
        return envelope({"status": "success", "root_uri": root, "source_path": body.get("path")})

    def system_status(self, req: LoopbackRequest, account: str, user: str) -> Any:
        return envelope({"initialized": True, "user": user})

    # -- server

    def server(self) -> LoopbackServer:
        srv = LoopbackServer(openapi=OPENAPI, name="openviking")
        c = self._with_caller
        srv.route(
            "GET",
            "/health",
            lambda req: {
                "status": "ok",
                "healthy": True,
                "version": "0.5.2",
                "auth_mode": "trusted",
            },
        )
        srv.route("GET", "/api/v1/system/status", c(self.system_status))
        srv.route("POST", "/api/v1/content/write", c(self.write))
        srv.route("GET", "/api/v1/content/read", c(self.read))
        srv.route("GET", "/api/v1/content/abstract", c(self.summary))
        srv.route("GET", "/api/v1/content/overview", c(self.summary))
        srv.route("POST", "/api/v1/search/find", c(self.find))
        srv.route("POST", "/api/v1/search/search", c(self.find))
        srv.route("GET", "/api/v1/fs/ls", c(self.ls))
        srv.route("GET", "/api/v1/fs/tree", c(self.tree))
        srv.route("GET", "/api/v1/fs/stat", c(self.stat))
        srv.route("DELETE", "/api/v1/fs", c(self.delete))
        srv.route("POST", "/api/v1/sessions/{session_id}/messages/batch", c(self.batch))
        srv.route("POST", "/api/v1/sessions/{session_id}/commit", c(self.commit))
        srv.route("GET", "/api/v1/sessions/{session_id}", c(self.session))
        srv.route("POST", "/api/v1/resources", c(self.add_resource))
        return srv


__all__ = ["OPENAPI", "ROOT_KEY", "OpenVikingDouble", "tokens"]
