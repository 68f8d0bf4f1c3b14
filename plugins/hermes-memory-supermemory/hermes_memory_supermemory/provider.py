"""Supermemory as the external memory provider of hermes-core.

Scoping (spec §4; issue 15): memories live in **container tags**; every user gets their own
container under ``container_tag`` (see :mod:`hermes_memory_supermemory.tags`), and every
call names it, so two users never share memories. Custom containers (opt-in) are per user
too.

Hooks:

* ``prefetch`` — ``POST /v4/profile`` with the query: profile facts (first turn and every
  ``profile_frequency`` turns) and relevant memories, bounded by ``api_timeout`` (and the
  host's ``memory.prefetch_timeout``);
* ``sync`` — the cleaned turn is stored as a document with a stable ``customId``
  (``<session>-t<turn>``), so a resend updates instead of duplicating; turns are written in
  order (the host runs sync on one worker); a failed write stays queued and is retried first;
* ``on_pre_compress`` — the conversation so far is ingested (``/v4/conversations``) before
  compression drops it, and the profile facts go to the summariser;
* ``on_session_end`` — the whole session is ingested once to ``/v4/conversations``
  (resending the same ``conversationId`` lets the server append, never duplicate);
* ``on_memory_write`` — built-in memory ``add``s are stored as explicit memories;
* tools ``supermemory_store``, ``supermemory_search``, ``supermemory_forget``,
  ``supermemory_profile`` (JSON; recalled text passes the shared screening).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core import (
    HealthCheck,
    MemoryContext,
    MemoryProvider,
    MemoryWrite,
    PromptBlock,
    ProviderSettings,
    SessionInfo,
    ToolContext,
    ToolSpec,
    Turn,
    hookimpl,
)
from hermes_core.providers.service import (
    ServiceClient,
    ServiceError,
    ServiceNotFound,
    ServicePaused,
    screen_recalled,
    service_settings,
)
from hermes_core.providers.service.tools import tool_json as _json
from hermes_memory_supermemory.api import SupermemoryAPI
from hermes_memory_supermemory.settings import (
    KEY_URL,
    SupermemorySettings,
    apply_supermemory_json,
)
from hermes_memory_supermemory.tags import base_tag, user_tag

log = logging.getLogger(__name__)

LABEL = "Supermemory"
MAX_QUEUED = 200
_REMEMBERED = 4096
"""Written turn ids / session turn counters kept in memory (oldest forgotten first)."""
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")


def _error(message: str) -> str:
    return _json({"error": message})


def _clean(text: str) -> str:
    from hermes_core.context import strip_memory_context

    return strip_memory_context(text or "").strip()


def _safe_id(raw: str) -> str:
    return _SAFE_ID.sub("-", raw)[:100].strip("-") or "x"


class SupermemoryProvider(MemoryProvider):
    """Supermemory over its v3/v4 REST API (see :mod:`hermes_memory_supermemory.api`)."""

    name = "supermemory"
    Settings = SupermemorySettings

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        assert isinstance(settings, SupermemorySettings)
        self.cfg: SupermemorySettings = apply_supermemory_json(settings, self.home)
        self.settings = self.cfg
        self.base_tag = base_tag(self.cfg.container_tag, self.home)
        self._names = service_settings(
            SupermemorySettings, self.name, LABEL, key_field="api_key", url_field="base_url"
        )
        self._client: ServiceClient | None = None
        self._api: SupermemoryAPI | None = None
        self._lock = threading.RLock()
        self._queue: list[tuple[str, dict[str, Any]]] = []
        self._written: OrderedDict[str, None] = OrderedDict()
        self._turns: OrderedDict[str, int] = OrderedDict()

    # -- identity

    def is_available(self) -> bool:
        return self.cfg.api_key is not None

    def unavailable_reason(self) -> str:
        if self.is_available():
            return ""
        return (
            f"Supermemory needs an API key: set SUPERMEMORY_API_KEY (get one at {KEY_URL}) or "
            "run `hermes-memory memory setup supermemory`."
        )

    # -- plumbing

    @property
    def api(self) -> SupermemoryAPI:
        with self._lock:
            if self._api is None:
                self._client = ServiceClient(
                    self.cfg.base_url,
                    settings=self._names,
                    api_key=self.cfg.api_key,
                    timeout=self.cfg.api_timeout,
                    retries=self.cfg.retries,
                    failure_threshold=self.cfg.failure_threshold,
                    cooldown=self.cfg.breaker_cooldown,
                )
                self._api = SupermemoryAPI(self._client)
            return self._api

    def container(self, session: SessionInfo, custom: str | None = None) -> str:
        """This user's container (``custom``: one of ``custom_containers``)."""
        base = base_tag(custom, self.home) if custom else self.base_tag
        return user_tag(base, session.user_id)

    def _log_failure(self, what: str, exc: ServiceError) -> None:
        if isinstance(exc, ServicePaused):
            log.debug("supermemory %s skipped: %s", what, exc)
        else:
            log.warning("supermemory %s failed: %s", what, exc)

    # -- prompt

    @hookimpl
    def system_prompt_block(self, session: SessionInfo) -> PromptBlock | None:
        if not self.is_available():
            return None
        lines = [
            "# Supermemory",
            "Long-term memory is active. Use supermemory_search to look things up, "
            "supermemory_store to save a durable fact, supermemory_forget to remove one and "
            "supermemory_profile for the user's profile.",
        ]
        if self.cfg.enable_custom_container_tags and self.cfg.custom_containers:
            names = ", ".join(self.cfg.custom_containers)
            lines.append(
                f"Extra containers you may pass as container_tag: {names}. "
                + self.cfg.custom_container_instructions
            )
        return PromptBlock("\n".join(lines).strip(), source=self.name)

    # -- recall

    @hookimpl
    def on_turn_start(self, session: SessionInfo, turn_number: int) -> None:
        with self._lock:
            self._turns[session.id] = turn_number
            self._turns.move_to_end(session.id)
            while len(self._turns) > _REMEMBERED:
                self._turns.popitem(last=False)

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        if not self.cfg.auto_recall or not self.is_available() or not query.strip():
            return None
        with self._lock:
            turn = self._turns.get(session.id, 1)
        try:
            static, dynamic, results = self.api.profile(
                self.container(session), query=query[:200], deadline=self.cfg.api_timeout
            )
        except ServiceNotFound:
            return None
        except ServiceError as exc:
            self._log_failure("recall", exc)
            return None
        with_profile = turn <= 1 or turn % self.cfg.profile_frequency == 0
        limit = self.cfg.max_recall_results
        seen: set[str] = set()

        def fresh(items: Sequence[str]) -> list[str]:
            out = []
            for item in items:
                key = " ".join(item.split())
                if key and key not in seen:
                    seen.add(key)
                    out.append(key)
            return out[:limit]

        sections: list[str] = []
        count = 0
        if with_profile:
            for title, items in (
                ("## User Profile (Persistent)", fresh(static)),
                ("## Recent Context", fresh(dynamic)),
            ):
                if items:
                    sections.append(title + "\n" + "\n".join(f"- {i}" for i in items))
                    count += len(items)
        memories = fresh([str(r.get("memory") or r.get("chunk") or "") for r in results])
        if memories:
            sections.append("## Relevant Memories\n" + "\n".join(f"- {m}" for m in memories))
            count += len(memories)
        if not sections:
            return None
        return MemoryContext("\n\n".join(sections), count=count, label=LABEL)

    # -- writes

    def _turn_document(self, session: SessionInfo, turn: Turn) -> tuple[str, dict[str, Any]]:
        user, reply = _clean(turn.user_text), _clean(turn.reply)
        content = f"[role: user]\n{user}\n[user:end]\n\n[role: assistant]\n{reply}\n[assistant:end]"
        custom_id = _safe_id(f"{session.id}-t{turn.number}")
        return custom_id, {
            "content": content,
            "container_tag": self.container(session),
            "metadata": {"type": "turn", "session_id": session.id, "turn": turn.number},
        }

    def _capture(self, turn: Turn) -> bool:
        if self.cfg.capture_mode == "all":
            return bool(_clean(turn.user_text) or _clean(turn.reply))
        from hermes_core.context import is_trivial_prompt

        text = _clean(turn.user_text)
        return bool(text) and not is_trivial_prompt(text) and len(text) >= 10

    def _drain(self) -> None:
        """Write queued turn documents in order; stop at the first failure (kept queued)."""
        while True:
            with self._lock:
                if not self._queue:
                    return
                custom_id, doc = self._queue[0]
            try:
                self.api.add_document(
                    doc["content"],
                    doc["container_tag"],
                    custom_id=custom_id,
                    metadata=doc["metadata"],
                    entity_context=self.cfg.entity_context,
                )
            except ServiceError as exc:
                self._log_failure("turn capture", exc)
                return
            with self._lock:
                if self._queue and self._queue[0][0] == custom_id:
                    self._queue.pop(0)
                self._written[custom_id] = None
                while len(self._written) > _REMEMBERED:
                    self._written.popitem(last=False)

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        if not self.cfg.auto_capture or not self.is_available() or not self._capture(turn):
            return
        custom_id, doc = self._turn_document(session, turn)
        with self._lock:
            if custom_id in self._written or any(q[0] == custom_id for q in self._queue):
                return
            self._queue.append((custom_id, doc))
            if len(self._queue) > MAX_QUEUED:
                dropped = self._queue.pop(0)
                log.warning(
                    "supermemory: dropped queued turn %s while Supermemory is unreachable "
                    "(the session ingest at session end still carries it)",
                    dropped[0],
                )
        self._drain()

    def _ingest(self, session: SessionInfo, messages: Sequence[Any], partial: bool) -> None:
        cleaned = []
        for message in messages:
            if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
                continue
            content = message.get("content")
            text = _clean(content if isinstance(content, str) else "")
            if text:
                cleaned.append({"role": str(message["role"]), "content": text})
        if not cleaned or (len(cleaned) == 1 and len(cleaned[0]["content"]) < 20):
            return
        try:
            self.api.add_conversation(
                _safe_id(session.id),
                cleaned,
                self.container(session),
                metadata={
                    "type": "full_session",
                    "session_id": session.id,
                    "message_count": len(cleaned),
                    "partial": partial,
                },
                entity_context=self.cfg.entity_context,
            )
        except ServiceError as exc:
            self._log_failure("session ingest", exc)

    @hookimpl
    def on_session_end(self, session: SessionInfo, messages: Sequence[Any]) -> None:
        if not self.cfg.auto_capture or not self.is_available():
            return
        self._drain()
        self._ingest(session, messages, partial=False)

    @hookimpl
    def on_pre_compress(self, session: SessionInfo, messages: Sequence[Any]) -> str | None:
        if not self.is_available():
            return None
        if self.cfg.auto_capture:
            self._ingest(session, messages, partial=True)
        try:
            static, dynamic, _ = self.api.profile(
                self.container(session), deadline=self.cfg.api_timeout
            )
        except ServiceError as exc:
            self._log_failure("pre-compress profile", exc)
            return None
        kept, _ = screen_recalled([*static, *dynamic], "supermemory pre-compress")
        if not kept:
            return None
        return "What Supermemory knows about the user:\n" + "\n".join(f"- {k}" for k in kept)

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        if write.action != "add" or not write.content.strip() or not self.is_available():
            return
        try:
            self.api.add_document(
                write.content.strip(),
                self.container(session),
                metadata={"type": "explicit_memory", "target": write.target},
                entity_context=self.cfg.entity_context,
            )
        except ServiceError as exc:
            self._log_failure("memory mirror", exc)

    # -- tools

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        if not self.is_available():
            return []
        container: dict[str, Any] = {}
        if self.cfg.enable_custom_container_tags and self.cfg.custom_containers:
            container = {
                "container_tag": {
                    "type": "string",
                    "enum": list(self.cfg.custom_containers),
                    "description": "Optional extra container (default: the primary one).",
                }
            }
        return [
            ToolSpec(
                "supermemory_store",
                "Save a durable fact or note to long-term memory.",
                {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "metadata": {"type": "object"},
                        **container,
                    },
                    "required": ["content"],
                },
                self._tool_store,
            ),
            ToolSpec(
                "supermemory_search",
                "Search long-term memory by meaning.",
                {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "minLength": 1},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                        **container,
                    },
                    "required": ["query"],
                },
                self._tool_search,
                read_only=True,
            ),
            ToolSpec(
                "supermemory_forget",
                "Forget a memory: by `id` (from a search) or the best match for `query`.",
                {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "query": {"type": "string"},
                        **container,
                    },
                },
                self._tool_forget,
            ),
            ToolSpec(
                "supermemory_profile",
                "The user's persistent profile facts and recent context (optionally focused "
                "by `query`).",
                {"type": "object", "properties": {"query": {"type": "string"}, **container}},
                self._tool_profile,
                read_only=True,
            ),
        ]

    def _target(self, args: Mapping[str, Any], session: SessionInfo) -> str | None:
        """This user's container for the tool call, or None when ``container_tag`` is not
        allowed."""
        custom = args.get("container_tag")
        if custom in (None, "", self.cfg.container_tag):
            return self.container(session)
        if self.cfg.enable_custom_container_tags and custom in self.cfg.custom_containers:
            return self.container(session, str(custom))
        return None

    def _guard(self, fn: Callable[[], str]) -> str:
        try:
            return fn()
        except ServiceError as exc:
            self._log_failure("tool call", exc)
            return _error(str(exc))

    def _bad_container(self) -> str:
        allowed = (
            ", ".join(self.cfg.custom_containers) if self.cfg.enable_custom_container_tags else ""
        )
        return _error(
            "container_tag is not allowed" + (f"; use one of: {allowed}" if allowed else "")
        )

    def _tool_store(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        content = str(args.get("content") or "").strip()
        if not content:
            return _error("content is required")
        tag = self._target(args, ctx.session)
        if tag is None:
            return self._bad_container()
        raw = args.get("metadata")
        metadata = {
            str(k): v
            for k, v in (raw.items() if isinstance(raw, Mapping) else [])
            if isinstance(v, str | int | float | bool)
        }

        def run() -> str:
            doc_id = self.api.add_document(
                content,
                tag,
                metadata={"type": "explicit_memory", **metadata},
                entity_context=self.cfg.entity_context,
            )
            return _json({"saved": True, "id": doc_id})

        return self._guard(run)

    def _found(self, results: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        texts = [str(r.get("memory") or r.get("chunk") or "") for r in results]
        kept, dropped = screen_recalled(texts, "supermemory search")
        allowed = set(kept)
        out = []
        for result, text in zip(results, texts, strict=True):
            clean = text.strip()
            if clean in allowed:
                item: dict[str, Any] = {"id": result.get("id"), "memory": clean}
                if isinstance(result.get("similarity"), int | float):
                    item["similarity"] = round(float(result["similarity"]), 3)
                out.append(item)
        return out, dropped

    def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            return _error("query is required")
        tag = self._target(args, ctx.session)
        if tag is None:
            return self._bad_container()
        limit = args.get("limit", self.cfg.max_recall_results)
        limit = max(1, min(50, limit if isinstance(limit, int) else self.cfg.max_recall_results))

        def run() -> str:
            try:
                results = self.api.search(query, tag, limit=limit, search_mode=self.cfg.search_mode)
            except ServiceNotFound:
                results = []
            found, dropped = self._found(results)
            payload: dict[str, Any] = {"results": found, "count": len(found)}
            if dropped:
                payload["dropped"] = dropped
            return _json(payload)

        return self._guard(run)

    def _tool_forget(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory_id = str(args.get("id") or "").strip()
        query = str(args.get("query") or "").strip()
        if bool(memory_id) == bool(query):
            return _error("pass exactly one of `id` or `query`")
        tag = self._target(args, ctx.session)
        if tag is None:
            return self._bad_container()

        def run() -> str:
            target_id, preview = memory_id, ""
            if query:
                results = self.api.search(query, tag, limit=5, search_mode="memories")
                best = next((r for r in results if r.get("id") and r.get("memory")), None)
                if best is None:
                    return _json({"success": False, "message": "No matching memory to forget."})
                target_id, preview = str(best["id"]), str(best.get("memory", ""))[:100]
            try:
                forgotten = self.api.forget(tag, memory_id=target_id)
            except ServiceNotFound:
                return _error(f"no memory {target_id!r} in this user's memory")
            payload: dict[str, Any] = {"success": forgotten, "id": target_id}
            if preview:
                payload["message"] = f"Forgot: {preview}"
            return _json(payload)

        return self._guard(run)

    def _tool_profile(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        tag = self._target(args, ctx.session)
        if tag is None:
            return self._bad_container()
        query = str(args.get("query") or "").strip() or None

        def run() -> str:
            try:
                static, dynamic, _ = self.api.profile(tag, query=query)
            except ServiceNotFound:
                static, dynamic = [], []
            kept_static, d1 = screen_recalled(static, "supermemory profile")
            kept_dynamic, d2 = screen_recalled(dynamic, "supermemory profile")
            sections = []
            if kept_static:
                sections.append(
                    "## User Profile (Persistent)\n" + "\n".join(f"- {s}" for s in kept_static)
                )
            if kept_dynamic:
                sections.append("## Recent Context\n" + "\n".join(f"- {s}" for s in kept_dynamic))
            payload: dict[str, Any] = {
                "profile": "\n\n".join(sections),
                "static_count": len(kept_static),
                "dynamic_count": len(kept_dynamic),
            }
            if d1 + d2:
                payload["dropped"] = d1 + d2
            return _json(payload)

        return self._guard(run)

    # -- health and shutdown

    @hookimpl
    def health_check(self) -> list[HealthCheck]:
        if not self.is_available():
            return [HealthCheck("supermemory", False, "no API key", self.unavailable_reason())]
        client = self._client
        state = client.breaker.state if client is not None else "closed"
        if state == "closed":
            return [
                HealthCheck(
                    "supermemory", True, f"{self.cfg.base_url}, container {self.base_tag}.*"
                )
            ]
        return [
            HealthCheck(
                "supermemory",
                False,
                f"{self.cfg.base_url}: paused after repeated failures ({state})",
                f"check that Supermemory is reachable at {self.cfg.base_url} and "
                "SUPERMEMORY_API_KEY",
            )
        ]

    def shutdown(self) -> None:
        with self._lock:
            client, self._client, self._api = self._client, None, None
            pending = len(self._queue)
        if pending:
            log.warning(
                "supermemory: %d captured turns were not written (Supermemory unreachable)",
                pending,
            )
        if client is not None:
            client.close()


__all__ = ["SupermemoryProvider"]
