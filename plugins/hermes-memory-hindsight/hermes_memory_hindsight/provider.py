"""The hindsight memory provider: Hindsight memory banks behind hermes-core's hooks.

Behaviour (spec §4, Hindsight):

* scope: a session's bank is ``bank_id_template`` rendered for its user (default
  ``{bank}-{user}``: one bank per user); every memory is tagged ``user:<id>`` and every recall
  and reflect filters on that tag with ``all_strict``, so two users never share memories;
* ``on_turn_start`` starts the recall of the user's message in the background; ``prefetch``
  waits at most ``prefetch_wait`` for it and otherwise answers with the recall queued after
  the previous turn (``recall_sync`` waits up to the host's ``prefetch_timeout``);
* ``sync`` retains each turn (``User: …`` / ``Assistant: …``) as its own document
  ``<session>-t<n>``: re-sending a turn replaces that document, never duplicates it;
  ``retain_every_n_turns`` > 1 buffers turns into one document, flushed at session end;
* ``on_memory_write`` mirrors built-in memory writes: ``add`` retains the entry as a
  document named by its content hash, ``replace``/``remove`` delete the previous entry's
  document (the hash of ``previous_content``) first;
* ``on_pre_compress`` recalls what the bank already knows about the messages being
  compressed and hands it to the summariser as source material;
* tools ``hindsight_retain``, ``hindsight_recall``, ``hindsight_reflect`` (not in
  ``memory_mode: context``), each returning a JSON object with ``success``;
* every call goes through the shared :class:`~hermes_core.providers.service.ServiceClient`
  (timeouts, retries with backoff, a circuit breaker); recalled text the threat scanner flags
  is dropped from tool results too (the host screens prefetch).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import hashlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core import (
    HealthCheck,
    MemoryContext,
    MemoryProvider,
    MemoryWrite,
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
    service_settings,
)
from hermes_core.providers.service.outbox import Outbox
from hermes_core.providers.service.tools import guard_tool, stop_background, text_arg
from hermes_core.providers.service.tools import tool_error as _fail
from hermes_core.providers.service.tools import tool_json as _json
from hermes_memory_hindsight.api import Fact, HindsightAPI
from hermes_memory_hindsight.banks import render_bank_id, session_tag, user_tag
from hermes_memory_hindsight.settings import HindsightSettings, apply_config_file

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings
    from hermes_core.types import ChatMessage

log = logging.getLogger(__name__)

T = TypeVar("T")

LABEL = "Hindsight"
GLYPH = "👁️"
HEADING = "## Hindsight Memory"
MAX_CONTENT_CHARS = 20_000
MAX_QUERY_CHARS = 4_000
MAX_TOOL_TAGS = 10


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:20]


def _flagged(text: str) -> bool:
    from hermes_core.security.scan import scan

    return scan(text, "context").blocked


class HindsightProvider(MemoryProvider):
    """Hindsight (Vectorize) as the external memory provider: cloud or your own server."""

    name = "hindsight"
    Settings = HindsightSettings

    def __init__(
        self, settings: ProviderSettings, home: Path, *, client: ServiceClient | None = None
    ) -> None:
        super().__init__(settings, home)
        if not isinstance(settings, HindsightSettings):
            settings = HindsightSettings.model_validate(settings.model_dump())
        self.settings: HindsightSettings = apply_config_file(settings, self.home)
        self._hermes: HermesSettings | None = None
        self._client = client
        self._api: HindsightAPI | None = None
        self._lock = threading.Lock()
        self._executor: cf.ThreadPoolExecutor | None = None
        self._pending: dict[str, tuple[str, cf.Future[list[Fact]]]] = {}
        self._cached: dict[str, list[Fact]] = {}
        self._synced: set[tuple[str, int]] = set()
        self._buffer: dict[str, list[Turn]] = {}
        self._banks_ready: set[str] = set()
        self.outbox = Outbox("Hindsight", logger=log)
        self._closed = False

    # ------------------------------------------------------------ availability

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        s = self.settings
        if s.effective_mode() == "cloud" and not s.key():
            return (
                "Hindsight Cloud needs an API key: set HINDSIGHT_API_KEY (get one at "
                "https://ui.hindsight.vectorize.io) or point HINDSIGHT_API_URL at your own "
                "server; `hermes-memory memory setup hindsight` does both"
            )
        return ""

    # ------------------------------------------------------------ plumbing

    def api(self) -> HindsightAPI:
        """The API client, built on first use (no network until a call)."""
        with self._lock:
            if self._closed:
                raise ServiceError("hindsight provider is shut down", service="Hindsight")
            if self._api is None:
                s = self.settings
                client = self._client or ServiceClient(
                    s.base_url(),
                    settings=service_settings(
                        HindsightSettings,
                        self.name,
                        "Hindsight",
                        key_field="api_key",
                        url_field="api_url",
                    ),
                    api_key=s.api_key,
                    timeout=s.timeout,
                    connect_timeout=min(s.timeout, 5.0),
                    retries=s.retries,
                    failure_threshold=s.failure_threshold,
                    cooldown=s.breaker_cooldown,
                )
                self._api = HindsightAPI(client)
            return self._api

    def user(self, session: SessionInfo) -> str:
        """The user every call of ``session`` is scoped to."""
        return session.user_id or self.settings.user_id

    def bank(self, session: SessionInfo) -> str:
        """The bank of ``session`` (see :mod:`hermes_memory_hindsight.banks`)."""
        profile = self.home.name if self.home.name not in ("", ".hermes") else ""
        return render_bank_id(
            self.settings.bank_id_template,
            self.settings.bank_id,
            user=self.user(session),
            profile=profile,
            platform=session.source,
            session=session.id,
        )

    def scope_tags(self, session: SessionInfo) -> list[str]:
        """Tags recall filters on: the user's own, plus ``recall_tags``."""
        tags = [user_tag(self.user(session))]
        tags += [t for t in self.settings.recall_tags if t not in tags]
        return tags

    def _write_tags(self, session: SessionInfo, extra: Sequence[str] = ()) -> list[str]:
        tags = [user_tag(self.user(session)), session_tag(session.id)]
        for tag in [*self.settings.retain_tags, *self.settings.recall_tags, *extra]:
            if tag and tag not in tags:
                tags.append(tag)
        return tags

    def _metadata(self, session: SessionInfo, **extra: str) -> dict[str, str]:
        meta = {
            "session_id": session.id,
            "platform": session.source,
            "user_id": self.user(session),
            "retained_at": datetime.now(UTC).isoformat(),
        }
        if self.settings.retain_source:
            meta["source"] = self.settings.retain_source
        meta.update(extra)
        return meta

    def _ensure_bank(self, bank: str) -> None:
        """Apply the configured missions once per bank (banks without missions are created
        by the server on first retain)."""
        s = self.settings
        if bank in self._banks_ready or not (s.bank_mission or s.bank_retain_mission):
            return
        self.api().put_bank(
            bank, reflect_mission=s.bank_mission, retain_mission=s.bank_retain_mission
        )
        with self._lock:
            self._banks_ready.add(bank)

    def _retain_later(self, bank: str, item: Mapping[str, Any]) -> None:
        """Retain ``item`` through the outbox: delivered in order, kept while the server is
        unavailable (its document id makes a re-send harmless)."""
        run_async = self.settings.retain_async

        def write() -> None:
            self._ensure_bank(bank)
            self.api().retain(bank, [item], run_async=run_async)

        self.outbox.send(f"retain:{bank}:{item['document_id']}", write)

    def _forget_later(self, bank: str, document_id: str) -> None:
        def write() -> None:
            try:
                self.api().delete_document(bank, document_id)
            except ServiceNotFound:
                log.debug("hindsight: no document %s to forget", document_id)

        self.outbox.send(f"delete:{bank}:{document_id}", write)

    def _submit(self, fn: Callable[[], T]) -> cf.Future[T]:
        with self._lock:
            if self._executor is None:
                self._executor = cf.ThreadPoolExecutor(
                    max_workers=2, thread_name_prefix="hindsight"
                )
            executor = self._executor
        ctx = contextvars.copy_context()
        return executor.submit(ctx.run, fn)

    def _breaker_open(self) -> bool:
        api = self._api
        return api is not None and api.client.breaker.state == "open"

    def recall(
        self, session: SessionInfo, query: str, *, deadline: float | None = None
    ) -> list[Fact]:
        """The session user's memories relevant to ``query`` (best first)."""
        s = self.settings
        return self.api().recall(
            self.bank(session),
            query,
            tags=self.scope_tags(session),
            budget=s.recall_budget,
            max_tokens=s.recall_context_budget,
            types=s.recall_types,
            deadline=deadline,
        )

    def _auto_recall(self, session: SessionInfo, query: str) -> list[Fact]:
        """What automatic recall injects: ranked facts, or one reflect answer."""
        s = self.settings
        budget = self._wait_budget(session)
        if s.recall_prefetch_method == "reflect":
            text = self.api().reflect(
                self.bank(session),
                query[: s.recall_max_input_chars],
                tags=self.scope_tags(session),
                budget=s.recall_budget,
                deadline=budget,
            )
            return [Fact(id="reflect", text=text, type="reflect")] if text.strip() else []
        return self.recall(session, query[: s.recall_max_input_chars], deadline=budget)

    def _wait_budget(self, session: SessionInfo | None = None) -> float:
        s = self.settings
        if not s.recall_sync:
            return s.prefetch_wait
        hermes = session.settings if session is not None else self._hermes
        host_budget = hermes.memory.prefetch_timeout if hermes is not None else s.prefetch_wait
        return max(0.1, host_budget - 0.25)

    def _auto_recall_on(self) -> bool:
        return self.settings.auto_recall and self.settings.memory_mode != "tools"

    # ------------------------------------------------------------ hooks

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        self._hermes = settings

    @hookimpl
    def system_prompt_block(self, session: SessionInfo) -> Any:
        from hermes_core import PromptBlock

        s = self.settings
        head = f"# Hindsight Memory\nActive. Bank: {self.bank(session)}, budget: {s.recall_budget}."
        if s.memory_mode == "context":
            body = "Relevant memories are injected into context automatically."
        elif s.memory_mode == "tools":
            body = (
                "Use hindsight_recall to search, hindsight_reflect for synthesis, "
                "hindsight_retain to store facts."
            )
        else:
            body = (
                "Relevant memories are injected into context automatically. Use "
                "hindsight_recall to search, hindsight_reflect for synthesis, "
                "hindsight_retain to store facts."
            )
        return PromptBlock(text=f"{head}\n{body}", source=self.name)

    @hookimpl
    def on_turn_start(self, session: SessionInfo, message: str) -> None:
        query = (message or "").strip()
        if not query or self._closed or not self._auto_recall_on() or self._breaker_open():
            return
        future = self._submit(lambda: self._auto_recall(session, query))
        with self._lock:
            self._pending[session.id] = (query, future)

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        query = (query or "").strip()
        if not query or self._closed or not self._auto_recall_on():
            return None
        with self._lock:
            pending = self._pending.pop(session.id, None)
        if pending is not None and pending[0] == query:
            future = pending[1]
        else:
            future = self._submit(lambda: self._auto_recall(session, query))
        try:
            facts = future.result(timeout=self._wait_budget(session))
        except cf.TimeoutError:
            log.info("hindsight recall still running after %.1fs", self._wait_budget(session))
            with self._lock:
                facts = self._cached.get(session.id, [])
        except ServicePaused as exc:  # the breaker already said so, once
            log.debug("hindsight recall skipped: %s", exc)
            return None
        except ServiceError as exc:
            log.warning("hindsight recall failed: %s", exc)
            return None
        return self.format_context(facts[: self.settings.recall_max_results])

    @staticmethod
    def format_context(facts: Sequence[Fact]) -> MemoryContext | None:
        """``## Hindsight Memory`` and one ``- fact`` line per fact (None if none)."""
        lines = []
        for fact in facts:
            text = " ".join(fact.text.split())
            if text:
                lines.append(f"- {text}")
        if not lines:
            return None
        return MemoryContext(
            text="\n".join([HEADING, *lines]), count=len(lines), label=LABEL, glyph=GLYPH
        )

    def turn_content(self, turns: Sequence[Turn]) -> str:
        """The retained text of ``turns``: ``User: …`` / ``Assistant: …`` lines."""
        s = self.settings
        lines: list[str] = []
        for turn in turns:
            if turn.user_text.strip():
                lines.append(f"{s.retain_user_prefix}: {turn.user_text.strip()}")
            if turn.reply.strip():
                lines.append(f"{s.retain_assistant_prefix}: {turn.reply.strip()}")
        return "\n".join(lines)[:MAX_CONTENT_CHARS]

    def _retain_turns(self, session: SessionInfo, turns: Sequence[Turn]) -> None:
        content = self.turn_content(turns)
        if not content:
            return
        first, last = turns[0].number, turns[-1].number
        doc = f"{session.id}-t{first}" if first == last else f"{session.id}-t{first}-{last}"
        item = {
            "content": content,
            "context": self.settings.retain_context,
            "document_id": doc,
            "timestamp": datetime.fromtimestamp(turns[-1].ended_at, UTC).isoformat(),
            "tags": self._write_tags(session),
            "metadata": self._metadata(session, turn_index=str(last)),
        }
        self._retain_later(self.bank(session), item)

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        if not self.settings.auto_retain or self._closed:
            return
        key = (session.id, turn.number)
        with self._lock:
            if key in self._synced:
                return  # a re-sent turn: its document is already stored
            buffered = [t for t in self._buffer.get(session.id, []) if t.number != turn.number]
            buffered.append(turn)
            if len(buffered) < self.settings.retain_every_n_turns:
                self._buffer[session.id] = buffered
                self._synced.add(key)
                return
            self._buffer.pop(session.id, None)
        self._retain_turns(session, buffered)
        with self._lock:
            self._synced.add(key)

    @hookimpl
    def on_turn_end(self, session: SessionInfo, turn: Turn) -> None:
        query = (turn.user_text or "").strip()
        if not query or self._closed or not self._auto_recall_on() or self._breaker_open():
            return

        def run() -> list[Fact]:
            facts = self._auto_recall(session, query)
            with self._lock:
                self._cached[session.id] = facts
            return facts

        self._submit(run)

    def _entry_document(self, session: SessionInfo, target: str, content: str) -> str:
        return f"builtin-{target}-{_digest(self.user(session), target, content.strip())}"

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        bank = self.bank(session)
        if write.action in ("replace", "remove") and write.previous_content:
            old = self._entry_document(session, write.target, write.previous_content)
            self._forget_later(bank, old)
        if write.action == "remove" or not write.content.strip():
            return
        label = "user profile" if write.target == "user" else "agent memory"
        item = {
            "content": write.content.strip()[:MAX_CONTENT_CHARS],
            "context": f"{label} (Hermes built-in memory)",
            "document_id": self._entry_document(session, write.target, write.content),
            "tags": self._write_tags(session, [f"builtin:{write.target}"]),
            "metadata": self._metadata(session, source=f"builtin:{write.target}"),
        }
        self._retain_later(bank, item)

    @hookimpl
    def on_pre_compress(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> str | None:
        users = [
            str(m.get("content") or "")
            for m in messages
            if m.get("role") == "user" and isinstance(m.get("content"), str)
        ]
        query = " ".join(" ".join(users[-3:]).split())[: self.settings.recall_max_input_chars]
        if not query or self._closed or self._breaker_open():
            return None
        try:
            facts = self.recall(session, query, deadline=self.settings.prefetch_wait)
        except ServiceError as exc:
            log.warning("hindsight pre-compress recall failed: %s", exc)
            return None
        kept = [f for f in facts if f.text.strip() and not _flagged(f.text)]
        if not kept:
            return None
        lines = [f"- {' '.join(f.text.split())}" for f in kept[: self.settings.recall_max_results]]
        return "Hindsight already remembers (long-term memory):\n" + "\n".join(lines)

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        with self._lock:
            buffered = self._buffer.pop(session.id, [])
            self._pending.pop(session.id, None)
            self._cached.pop(session.id, None)
            self._synced = {k for k in self._synced if k[0] != session.id}
        if self._closed:
            return
        if buffered:
            self._retain_turns(session, buffered)
        self.outbox.flush()

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        if self.settings.memory_mode == "context":
            return []
        return [
            ToolSpec(
                name="hindsight_retain",
                description="Store information in long-term memory. Hindsight extracts "
                "structured facts, resolves entities and indexes them for retrieval.",
                parameters={
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The information to store."},
                        "context": {
                            "type": "string",
                            "description": "Short label, e.g. 'user preference'.",
                        },
                        "tags": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Optional tags to file it under.",
                        },
                    },
                    "required": ["content"],
                },
                handler=self._tool_retain,
                toolset="memory",
            ),
            ToolSpec(
                name="hindsight_recall",
                description="Search long-term memory: semantic search, keyword matching, "
                "entity graph and reranking. Returns the best matching memories.",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to search for."}
                    },
                    "required": ["query"],
                },
                handler=self._tool_recall,
                toolset="memory",
                read_only=True,
            ),
            ToolSpec(
                name="hindsight_reflect",
                description="Answer a question by reasoning across all long-term memories "
                "(the server synthesises one answer).",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "The question to reflect on."}
                    },
                    "required": ["query"],
                },
                handler=self._tool_reflect,
                toolset="memory",
                read_only=True,
            ),
        ]

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        reason = self.unavailable_reason()
        s = self.settings
        checks = [
            HealthCheck(
                name=f"hindsight ({s.effective_mode()}, {s.base_url()})",
                ok=not reason,
                detail=reason or f"bank template {s.bank_id_template!r}",
                fix=reason,
            )
        ]
        api = self._api
        if api is not None and api.client.breaker.state != "closed":
            checks.append(
                HealthCheck(
                    name="hindsight circuit breaker",
                    ok=False,
                    detail=f"paused for {api.client.breaker.remaining():.0f} s after repeated "
                    "failures",
                    fix="check the Hindsight server and HINDSIGHT_API_KEY; calls resume "
                    "automatically",
                )
            )
        return checks

    def shutdown(self) -> None:
        if self.outbox.pending and not self._closed:
            log.warning(
                "%d write(s) to Hindsight could not be delivered before shutdown (the server "
                "was unavailable); they are lost",
                self.outbox.pending,
            )
        with self._lock:
            executor, self._executor = self._executor, None
            api, self._api = self._api, None
            self._pending.clear()
            self._closed = True
        stop_background(executor, api, log=log, name="hindsight")

    # ------------------------------------------------------------ tool handlers

    _text_arg = staticmethod(text_arg)

    @staticmethod
    def _guard(fn: Callable[[], str]) -> str:
        return guard_tool(fn, log=log, name="hindsight")

    def _tool_retain(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        content = self._text_arg(args, "content")
        if content is None:
            return _fail("'content' is required: pass the information to store as a string")
        if len(content) > MAX_CONTENT_CHARS:
            return _fail(f"'content' is too long ({len(content)} chars; max {MAX_CONTENT_CHARS})")
        context = self._text_arg(args, "context")
        raw_tags = args.get("tags") or []
        if not isinstance(raw_tags, list) or not all(isinstance(t, str) for t in raw_tags):
            return _fail("'tags' must be a list of strings")
        if len(raw_tags) > MAX_TOOL_TAGS:
            return _fail(f"at most {MAX_TOOL_TAGS} tags")
        tags = [
            t.strip() for t in raw_tags if t.strip() and not t.startswith(("user:", "session:"))
        ]
        session = ctx.session

        def run() -> str:
            bank = self.bank(session)
            doc = f"tool-{_digest(self.user(session), content)}"
            item: dict[str, Any] = {
                "content": content,
                "document_id": doc,
                "tags": self._write_tags(session, tags),
                "metadata": self._metadata(session, source="hindsight_retain"),
            }
            if context:
                item["context"] = context
            self._ensure_bank(bank)
            self.api().retain(bank, [item], run_async=self.settings.retain_async)
            return _json({"success": True, "result": "Memory stored.", "document_id": doc})

        return self._guard(run)

    def _tool_recall(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = self._text_arg(args, "query")
        if query is None:
            return _fail("'query' is required: pass what to search for as a string")
        if len(query) > MAX_QUERY_CHARS:
            return _fail(f"'query' is too long ({len(query)} chars; max {MAX_QUERY_CHARS})")

        def run() -> str:
            facts = self.recall(ctx.session, query)
            kept = [f for f in facts if not _flagged(f.text)]
            payload: dict[str, Any] = {
                "success": True,
                "results": [f.as_json() for f in kept],
                "count": len(kept),
            }
            if len(kept) < len(facts):
                payload["withheld"] = len(facts) - len(kept)
            if not kept:
                payload["result"] = "No relevant memories found."
            return _json(payload)

        return self._guard(run)

    def _tool_reflect(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = self._text_arg(args, "query")
        if query is None:
            return _fail("'query' is required: pass the question as a string")
        if len(query) > MAX_QUERY_CHARS:
            return _fail(f"'query' is too long ({len(query)} chars; max {MAX_QUERY_CHARS})")
        session = ctx.session

        def run() -> str:
            text = self.api().reflect(
                self.bank(session),
                query,
                tags=self.scope_tags(session),
                budget=self.settings.recall_budget,
            )
            if _flagged(text):
                return _fail("the reflect answer was withheld: the threat scanner flagged it")
            return _json({"success": True, "answer": text or "No relevant memories found."})

        return self._guard(run)


__all__ = ["GLYPH", "HEADING", "LABEL", "HindsightProvider"]
