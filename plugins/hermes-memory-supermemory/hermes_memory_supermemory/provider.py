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
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.markers import hookimpl
from hermes_core.providers.base import ProviderSettings
from hermes_core.providers.service import (
    ServiceError,
    ServiceNotFound,
    ServiceProvider,
    screen_recalled,
)
from hermes_core.providers.service.tools import ToolRefused, screened_ok, text_arg
from hermes_core.recall_trace import item_scores
from hermes_core.tool_results import tool_error, tool_ok
from hermes_core.types import MemoryContext, MemoryWrite, SessionInfo, ToolContext, ToolSpec, Turn
from hermes_memory_supermemory.api import SupermemoryAPI, search_hits
from hermes_memory_supermemory.settings import (
    CONFIG_FILE,
    SupermemorySettings,
    read_supermemory_json,
)
from hermes_memory_supermemory.tags import base_tag, user_tag

log = logging.getLogger(__name__)

LABEL = "Supermemory"
MAX_QUEUED = 200
_REMEMBERED = 4096
"""Written turn ids / session turn counters kept in memory (oldest forgotten first)."""
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")


def _clean(text: str) -> str:
    from hermes_core.context import strip_memory_context

    return strip_memory_context(text or "").strip()


def _safe_id(raw: str) -> str:
    return _SAFE_ID.sub("-", raw)[:100].strip("-") or "x"


class SupermemoryProvider(ServiceProvider[SupermemorySettings, SupermemoryAPI]):
    """Supermemory over its v3/v4 REST API (see :mod:`hermes_memory_supermemory.api`)."""

    name = "supermemory"
    service = LABEL
    api_class = SupermemoryAPI
    config_file = CONFIG_FILE
    outbox_limit = MAX_QUEUED

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        self.cfg: SupermemorySettings = self.settings
        self.base_tag = base_tag(self.cfg.container_tag, self.home)
        self.breaker_fix = (
            f"check that Supermemory is reachable at {self.cfg.base_url} and SUPERMEMORY_API_KEY"
        )
        self._turns: OrderedDict[str, int] = OrderedDict()

    def config_values(self) -> dict[str, Any]:
        return read_supermemory_json(self.home)

    def health_summary(self) -> tuple[str, str]:
        name, _ = super().health_summary()
        return name, f"container {self.base_tag}.*"

    # -- plumbing

    def client_options(self) -> dict[str, Any]:
        return {**super().client_options(), "timeout": self.cfg.api_timeout}

    def container(self, session: SessionInfo, custom: str | None = None) -> str:
        """This user's container (``custom``: one of ``custom_containers``)."""
        base = base_tag(custom, self.home) if custom else self.base_tag
        return user_tag(base, session.user_id)

    # -- prompt

    def prompt_text(self, session: SessionInfo) -> str | None:
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
        return "\n".join(lines).strip()

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
            static, dynamic, results = self.api().profile(
                self.container(session), query=query[:200], deadline=self.cfg.api_timeout
            )
        except ServiceNotFound:
            return None
        except ServiceError as exc:
            self.log_failure("recall", exc)
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
        memories: list[tuple[str, float | None]] = []
        for hit in results:
            key = " ".join(hit.text.split())
            if key and key not in seen and len(memories) < limit:
                seen.add(key)
                memories.append((key, hit.similarity))
        if memories:
            sections.append("## Relevant Memories\n" + "\n".join(f"- {m}" for m, _ in memories))
        if not sections:
            return None
        # profile facts carry no score: the block has scores only on turns without them
        scores: list[float | None] = [None] * count
        scores += [similarity for _, similarity in memories]
        return MemoryContext(
            "\n\n".join(sections),
            count=count + len(memories),
            label=LABEL,
            scores=item_scores(scores),
        )

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

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        if not self.cfg.auto_capture or not self.is_available() or not self._capture(turn):
            return
        if not self.first_sync(session, turn):
            return
        custom_id, doc = self._turn_document(session, turn)

        def write() -> None:
            self.api().add_document(
                doc["content"],
                doc["container_tag"],
                custom_id=custom_id,
                metadata=doc["metadata"],
                entity_context=self.cfg.entity_context,
            )

        try:  # kept in order while Supermemory is unreachable
            self.send_later(f"turn:{custom_id}", write)
        except ServiceError as exc:
            self.log_failure("turn capture", exc)

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
            self.api().add_conversation(
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
            self.log_failure("session ingest", exc)

    @hookimpl
    def on_session_end(self, session: SessionInfo, messages: Sequence[Any]) -> None:
        self.forget_session(session)
        if not self.cfg.auto_capture or not self.is_available() or self._closed:
            return
        self.outbox.flush()
        self._ingest(session, messages, partial=False)

    @hookimpl
    def on_pre_compress(self, session: SessionInfo, messages: Sequence[Any]) -> str | None:
        if not self.is_available():
            return None
        if self.cfg.auto_capture:
            self._ingest(session, messages, partial=True)
        try:
            static, dynamic, _ = self.api().profile(
                self.container(session), deadline=self.cfg.api_timeout
            )
        except ServiceError as exc:
            self.log_failure("pre-compress profile", exc)
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
            self.api().add_document(
                write.content.strip(),
                self.container(session),
                metadata={"type": "explicit_memory", "target": write.target},
                entity_context=self.cfg.entity_context,
            )
        except ServiceError as exc:
            self.log_failure("memory mirror", exc)

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
            self.tool(
                "supermemory_store",
                "Save a durable fact or note to long-term memory.",
                {
                    "content": {"type": "string", "minLength": 1},
                    "metadata": {"type": "object"},
                    **container,
                },
                self._tool_store,
                required=["content"],
            ),
            self.tool(
                "supermemory_search",
                "Search long-term memory by meaning.",
                {
                    "query": {"type": "string", "minLength": 1},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                    **container,
                },
                self._tool_search,
                required=["query"],
                read_only=True,
            ),
            self.tool(
                "supermemory_forget",
                "Forget a memory: by `id` (from a search) or the best match for `query`.",
                {
                    "id": {"type": "string"},
                    "query": {"type": "string"},
                    **container,
                },
                self._tool_forget,
            ),
            self.tool(
                "supermemory_profile",
                "The user's persistent profile facts and recent context (optionally focused "
                "by `query`).",
                {"query": {"type": "string"}, **container},
                self._tool_profile,
                read_only=True,
            ),
        ]

    def _target(self, args: Mapping[str, Any], session: SessionInfo) -> str:
        """This user's container for the tool call; raises ToolRefused (naming the allowed
        tags) when ``container_tag`` is not allowed."""
        custom = args.get("container_tag")
        if custom in (None, "", self.cfg.container_tag):
            return self.container(session)
        if self.cfg.enable_custom_container_tags and custom in self.cfg.custom_containers:
            return self.container(session, str(custom))
        allowed = (
            ", ".join(self.cfg.custom_containers) if self.cfg.enable_custom_container_tags else ""
        )
        raise ToolRefused(
            "container_tag is not allowed" + (f"; use one of: {allowed}" if allowed else "")
        )

    def _tool_store(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        content = text_arg(args, "content") or ""
        if not content:
            return tool_error("content is required")
        tag = self._target(args, ctx.session)
        raw = args.get("metadata")
        metadata = {
            str(k): v
            for k, v in (raw.items() if isinstance(raw, Mapping) else [])
            if isinstance(v, str | int | float | bool)
        }

        doc_id = self.api().add_document(
            content,
            tag,
            metadata={"type": "explicit_memory", **metadata},
            entity_context=self.cfg.entity_context,
        )
        return tool_ok(saved=True, id=doc_id)

    def _found(self, results: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        hits = search_hits(results)
        kept, dropped = screen_recalled([h.text for h in hits], "supermemory search")
        allowed = set(kept)
        out = []
        for hit in hits:
            clean = hit.text.strip()
            if clean in allowed:
                item: dict[str, Any] = {"id": hit.id, "memory": clean}
                if hit.similarity is not None:
                    item["similarity"] = round(hit.similarity, 3)
                out.append(item)
        return out, dropped

    def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = text_arg(args, "query") or ""
        if not query:
            return tool_error("query is required")
        tag = self._target(args, ctx.session)
        limit = args.get("limit", self.cfg.max_recall_results)
        limit = max(1, min(50, limit if isinstance(limit, int) else self.cfg.max_recall_results))

        try:
            results = self.api().search(query, tag, limit=limit, search_mode=self.cfg.search_mode)
        except ServiceNotFound:
            results = []
        found, dropped = self._found(results)
        return screened_ok(dropped, results=found, count=len(found))

    def _tool_forget(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory_id = text_arg(args, "id") or ""
        query = text_arg(args, "query") or ""
        if bool(memory_id) == bool(query):
            return tool_error("pass exactly one of `id` or `query`")
        tag = self._target(args, ctx.session)

        target_id, preview = memory_id, ""
        if query:
            results = self.api().search(query, tag, limit=5, search_mode="memories")
            best = next((r for r in results if r.get("id") and r.get("memory")), None)
            if best is None:
                return tool_error("No matching memory to forget.")
            target_id, preview = str(best["id"]), str(best.get("memory", ""))[:100]
        try:
            forgotten = self.api().forget(tag, memory_id=target_id)
        except ServiceNotFound:
            return tool_error(f"no memory {target_id!r} in this user's memory")
        if not forgotten:
            return tool_error(f"Supermemory did not forget {target_id!r}", id=target_id)
        payload: dict[str, Any] = {"id": target_id}
        if preview:
            payload["message"] = f"Forgot: {preview}"
        return tool_ok(**payload)

    def _tool_profile(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        tag = self._target(args, ctx.session)
        query = text_arg(args, "query")

        try:
            static, dynamic, _ = self.api().profile(tag, query=query)
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
        return screened_ok(
            d1 + d2,
            profile="\n\n".join(sections),
            static_count=len(kept_static),
            dynamic_count=len(kept_dynamic),
        )


__all__ = ["SupermemoryProvider"]
