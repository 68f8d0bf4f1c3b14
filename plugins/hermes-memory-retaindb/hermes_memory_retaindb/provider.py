"""The retaindb memory provider: RetainDB's hosted Memory API behind hermes-core's hooks.

Behaviour (spec §4, RetainDB):

* scope: every call names the project (``project``, else ``hermes-<profile>``, else
  ``default``) and the session's user (``user_id``, else the ``user_id`` setting); results
  are filtered to the caller's own memories, and ``retaindb_forget`` checks ownership before
  deleting (RetainDB itself deletes by id anywhere in the organisation);
* ``on_turn_start`` starts the search (and the profile read) in the background; ``prefetch``
  waits at most ``prefetch_wait`` and otherwise answers with what was recalled after the
  previous turn;
* ``sync`` (``ingest: turn``) sends each completed turn to ``/v1/memory/ingest/session`` for
  extraction, once per turn (an ``Idempotency-Key`` names the turn); ``ingest: session``
  sends the whole transcript at session end instead;
* ``on_memory_write`` mirrors built-in memory writes as typed memories (``user`` →
  preference, ``memory`` → factual); ``replace``/``remove`` delete the previous entry's
  memory first;
* ``on_pre_compress`` recalls what RetainDB already knows about the messages being
  compressed, as source material for the summariser;
* tools ``retaindb_profile``, ``retaindb_search``, ``retaindb_context``,
  ``retaindb_remember``, ``retaindb_forget``, each returning a JSON object with ``success``;
* every call goes through the shared :class:`~hermes_core.providers.service.ServiceClient`
  (timeouts, retries with backoff, a circuit breaker); recalled text the threat scanner flags
  is dropped from tool results too (the host screens prefetch).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import logging
import re
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
    service_settings,
)
from hermes_core.providers.service.outbox import Outbox
from hermes_core.providers.service.tools import guard_tool, stop_background, text_arg
from hermes_core.providers.service.tools import tool_error as _fail
from hermes_core.providers.service.tools import tool_json as _json
from hermes_memory_retaindb.api import Memory, RetainDBAPI, idempotency_key
from hermes_memory_retaindb.settings import MEMORY_TYPES, RetainDBSettings

if TYPE_CHECKING:
    from hermes_core.types import ChatMessage

log = logging.getLogger(__name__)

T = TypeVar("T")

LABEL = "RetainDB"
HEADING = "## RetainDB Memory"
MAX_CONTENT_CHARS = 10_000  # the API's limit for one memory
MAX_MESSAGE_CHARS = 20_000
MAX_QUERY_CHARS = 5_000  # the API's limit for a search query
_SPACE = re.compile(r"\s+")


def _flagged(text: str) -> bool:
    from hermes_core.security.scan import scan

    return scan(text, "context").blocked


def _compact(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


class RetainDBProvider(MemoryProvider):
    """RetainDB as the external memory provider."""

    name = "retaindb"
    Settings = RetainDBSettings

    def __init__(
        self, settings: ProviderSettings, home: Path, *, client: ServiceClient | None = None
    ) -> None:
        super().__init__(settings, home)
        if not isinstance(settings, RetainDBSettings):
            settings = RetainDBSettings.model_validate(settings.model_dump())
        self.settings: RetainDBSettings = settings
        self.project = settings.project_for(self.home)
        self._client = client
        self._api: RetainDBAPI | None = None
        self._lock = threading.Lock()
        self._executor: cf.ThreadPoolExecutor | None = None
        self._pending: dict[str, tuple[str, cf.Future[list[Memory]]]] = {}
        self._cached: dict[str, list[Memory]] = {}
        self._synced: set[tuple[str, int]] = set()
        self.outbox = Outbox("RetainDB", logger=log)
        self._closed = False

    # ------------------------------------------------------------ availability

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        if not self.settings.key():
            return (
                "RetainDB needs an API key: set RETAINDB_API_KEY (get one at "
                "https://www.retaindb.com) or run `hermes-memory memory setup retaindb`"
            )
        return ""

    # ------------------------------------------------------------ plumbing

    def api(self) -> RetainDBAPI:
        """The API client, built on first use (no network until a call)."""
        with self._lock:
            if self._closed:
                raise ServiceError("retaindb provider is shut down", service="RetainDB")
            if self._api is None:
                s = self.settings
                client = self._client or ServiceClient(
                    s.base_url,
                    settings=service_settings(
                        RetainDBSettings,
                        self.name,
                        "RetainDB",
                        key_field="api_key",
                        url_field="base_url",
                    ),
                    api_key=s.api_key,
                    headers={"x-sdk-runtime": "hermes-core"},
                    timeout=s.timeout,
                    connect_timeout=min(s.timeout, 5.0),
                    retries=s.retries,
                    failure_threshold=s.failure_threshold,
                    cooldown=s.breaker_cooldown,
                )
                self._api = RetainDBAPI(client, self.project)
            return self._api

    def user(self, session: SessionInfo) -> str:
        """The user every call of ``session`` is scoped to."""
        return session.user_id or self.settings.user_id

    def _submit(self, fn: Callable[[], T]) -> cf.Future[T]:
        with self._lock:
            if self._executor is None:
                self._executor = cf.ThreadPoolExecutor(max_workers=3, thread_name_prefix="retaindb")
            executor = self._executor
        ctx = contextvars.copy_context()
        return executor.submit(ctx.run, fn)

    def _breaker_open(self) -> bool:
        api = self._api
        return api is not None and api.client.breaker.state == "open"

    def search(
        self,
        session: SessionInfo,
        query: str,
        *,
        top_k: int | None = None,
        deadline: float | None = None,
    ) -> list[Memory]:
        """The session user's memories relevant to ``query`` (best first)."""
        return self.api().search(
            self.user(session),
            query[:MAX_QUERY_CHARS],
            top_k=top_k or self.settings.top_k,
            profile=self.settings.search_profile,
            deadline=deadline,
        )

    def recall(self, session: SessionInfo, query: str) -> list[Memory]:
        """What automatic recall injects: profile memories first, then search results,
        without duplicates."""
        budget = self.settings.prefetch_wait
        want_profile = self.settings.profile_in_context > 0
        profile_future = (
            self._submit(lambda: self.api().profile(self.user(session), deadline=budget))
            if want_profile
            else None
        )
        found = self.search(session, query, deadline=budget)
        profile: list[Memory] = []
        if profile_future is not None:
            try:
                profile = profile_future.result(timeout=budget)
            except (cf.TimeoutError, ServiceError) as exc:
                log.info("retaindb profile skipped: %s", exc)
        return merge(profile[: self.settings.profile_in_context], found)

    # ------------------------------------------------------------ hooks

    @hookimpl
    def system_prompt_block(self, session: SessionInfo) -> PromptBlock:
        return PromptBlock(
            text=(
                "# RetainDB Memory\n"
                f"Active. Project: {self.project}.\n"
                "Use retaindb_search to find memories, retaindb_remember to store facts, "
                "retaindb_profile for a user overview, retaindb_context for current-task "
                "context, retaindb_forget to delete a memory by id."
            ),
            source=self.name,
        )

    @hookimpl
    def on_turn_start(self, session: SessionInfo, message: str) -> None:
        query = (message or "").strip()
        if not query or self._closed or self._breaker_open():
            return
        future = self._submit(lambda: self.recall(session, query))
        with self._lock:
            self._pending[session.id] = (query, future)

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        query = (query or "").strip()
        if not query or self._closed:
            return None
        with self._lock:
            pending = self._pending.pop(session.id, None)
        if pending is not None and pending[0] == query:
            future = pending[1]
        else:
            future = self._submit(lambda: self.recall(session, query))
        try:
            memories = future.result(timeout=self.settings.prefetch_wait)
        except cf.TimeoutError:
            log.info("retaindb recall still running after %.1fs", self.settings.prefetch_wait)
            with self._lock:
                memories = self._cached.get(session.id, [])
        except ServicePaused as exc:  # the breaker already said so, once
            log.debug("retaindb recall skipped: %s", exc)
            return None
        except ServiceError as exc:
            log.warning("retaindb recall failed: %s", exc)
            return None
        return self.format_context(memories)

    @staticmethod
    def format_context(memories: Sequence[Memory]) -> MemoryContext | None:
        """``## RetainDB Memory`` and one ``- memory`` line each (None if none)."""
        lines = [f"- {_compact(m.content)}" for m in memories if _compact(m.content)]
        if not lines:
            return None
        return MemoryContext(text="\n".join([HEADING, *lines]), count=len(lines), label=LABEL)

    def _turn_messages(self, turn: Turn) -> list[dict[str, str]]:
        stamp = _iso(turn.ended_at)
        out = []
        for role, text in (("user", turn.user_text), ("assistant", turn.reply)):
            if text and text.strip():
                out.append(
                    {"role": role, "content": text.strip()[:MAX_MESSAGE_CHARS], "timestamp": stamp}
                )
        return out

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        if self.settings.ingest != "turn" or self._closed:
            return
        key = (session.id, turn.number)
        with self._lock:
            if key in self._synced:
                return  # a re-sent turn: already ingested
        messages = self._turn_messages(turn)
        if not messages:
            return
        self._ingest_later(session, messages, str(turn.number))
        with self._lock:
            self._synced.add(key)

    @hookimpl
    def on_turn_end(self, session: SessionInfo, turn: Turn) -> None:
        query = (turn.user_text or "").strip()
        if not query or self._closed or self._breaker_open():
            return

        def run() -> list[Memory]:
            memories = self.recall(session, query)
            with self._lock:
                self._cached[session.id] = memories
            return memories

        self._submit(run)

    def _find_own(self, session: SessionInfo, content: str) -> list[Memory]:
        wanted = _compact(content)
        return [m for m in self.search(session, wanted, top_k=20) if _compact(m.content) == wanted]

    def _ingest_later(
        self, session: SessionInfo, messages: Sequence[Mapping[str, str]], label: str
    ) -> None:
        """Ingest ``messages`` through the outbox: delivered in order, kept while RetainDB is
        unavailable (the ``Idempotency-Key`` makes a re-send harmless)."""
        uid = self.user(session)
        key = idempotency_key(self.project, uid, session.id, label)
        agent, mode = self.settings.agent_id, self.settings.write_mode

        def write() -> None:
            self.api().ingest(uid, session.id, messages, agent_id=agent, write_mode=mode, key=key)

        self.outbox.send(f"ingest:{key}", write)

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        uid = self.user(session)
        content = write.content.strip()[:MAX_CONTENT_CHARS]
        previous = (write.previous_content or "").strip()

        def mirror() -> None:
            if write.action in ("replace", "remove") and previous:
                for old in self._find_own(session, previous):
                    try:
                        self.api().delete(old.id)
                    except ServiceNotFound:
                        log.debug("retaindb: memory %s already gone", old.id)
            if write.action == "remove" or not content:
                return
            self.api().remember(
                uid,
                content,
                memory_type="preference" if write.target == "user" else "factual",
                importance=self.settings.default_importance,
                session_id=session.id,
                agent_id=self.settings.agent_id,
                write_mode=self.settings.write_mode,
                metadata={"source": f"hermes:builtin:{write.target}"},
                key=idempotency_key(self.project, uid, write.target, content),
            )

        label = idempotency_key(self.project, uid, write.action, write.target, previous, content)
        self.outbox.send(f"mirror:{label}", mirror)

    @hookimpl
    def on_pre_compress(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> str | None:
        users = [
            str(m.get("content"))
            for m in messages
            if m.get("role") == "user" and isinstance(m.get("content"), str)
        ]
        query = _compact(" ".join(users[-3:]))[:800]
        if not query or self._closed or self._breaker_open():
            return None
        try:
            found = self.search(session, query, deadline=self.settings.prefetch_wait)
        except ServiceError as exc:
            log.warning("retaindb pre-compress recall failed: %s", exc)
            return None
        kept = [m for m in found if not _flagged(m.content)]
        if not kept:
            return None
        lines = [f"- {_compact(m.content)}" for m in kept]
        return "RetainDB already remembers (long-term memory):\n" + "\n".join(lines)

    @hookimpl
    def on_session_end(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> None:
        with self._lock:
            self._pending.pop(session.id, None)
            self._cached.pop(session.id, None)
            self._synced = {k for k in self._synced if k[0] != session.id}
        if self._closed:
            return
        if self.settings.ingest != "session":
            self.outbox.flush()
            return
        stamp = _iso(datetime.now(UTC).timestamp())
        transcript = [
            {
                "role": str(m["role"]),
                "content": m["content"].strip()[:MAX_MESSAGE_CHARS],
                "timestamp": stamp,
            }
            for m in messages
            if m.get("role") in ("user", "assistant")
            and isinstance(m.get("content"), str)
            and m["content"].strip()
        ]
        if not transcript:
            return
        self._ingest_later(session, transcript, f"session:{len(transcript)}")

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="retaindb_profile",
                description="Get the user's stable profile: preferences, facts and patterns "
                "recalled from long-term memory.",
                parameters={"type": "object", "properties": {}, "required": []},
                handler=self._tool_profile,
                toolset="memory",
                read_only=True,
            ),
            ToolSpec(
                name="retaindb_search",
                description="Search the user's long-term memories (vector + keyword, "
                "reranked). Returns ranked results with ids.",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to search for."},
                        "top_k": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 20,
                            "description": "Max results (default 8, max 20).",
                        },
                    },
                    "required": ["query"],
                },
                handler=self._tool_search,
                toolset="memory",
                read_only=True,
            ),
            ToolSpec(
                name="retaindb_context",
                description="What long-term memory says about the current task: the user's "
                "profile plus the memories relevant to it, as one block.",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "The task or question."}
                    },
                    "required": ["query"],
                },
                handler=self._tool_context,
                toolset="memory",
                read_only=True,
            ),
            ToolSpec(
                name="retaindb_remember",
                description="Store an explicit fact, preference or decision in long-term memory.",
                parameters={
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The fact to remember."},
                        "memory_type": {
                            "type": "string",
                            "enum": list(MEMORY_TYPES),
                            "description": "Category (default factual).",
                        },
                        "importance": {
                            "type": "number",
                            "minimum": 0,
                            "maximum": 1,
                            "description": "Importance 0-1 (default 0.7).",
                        },
                    },
                    "required": ["content"],
                },
                handler=self._tool_remember,
                toolset="memory",
            ),
            ToolSpec(
                name="retaindb_forget",
                description="Delete one of the user's memories by id (ids come from "
                "retaindb_search or retaindb_profile).",
                parameters={
                    "type": "object",
                    "properties": {
                        "memory_id": {"type": "string", "description": "Memory id to delete."}
                    },
                    "required": ["memory_id"],
                },
                handler=self._tool_forget,
                toolset="memory",
            ),
        ]

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        reason = self.unavailable_reason()
        checks = [
            HealthCheck(
                name=f"retaindb ({self.settings.base_url}, project {self.project})",
                ok=not reason,
                detail=reason or "configured",
                fix=reason,
            )
        ]
        api = self._api
        if api is not None and api.client.breaker.state != "closed":
            checks.append(
                HealthCheck(
                    name="retaindb circuit breaker",
                    ok=False,
                    detail=f"paused for {api.client.breaker.remaining():.0f} s after repeated "
                    "failures",
                    fix="check RETAINDB_API_KEY and RETAINDB_BASE_URL; calls resume automatically",
                )
            )
        return checks

    def shutdown(self) -> None:
        if self.outbox.pending and not self._closed:
            log.warning(
                "%d write(s) to RetainDB could not be delivered before shutdown (the service "
                "was unavailable); they are lost",
                self.outbox.pending,
            )
        with self._lock:
            executor, self._executor = self._executor, None
            api, self._api = self._api, None
            self._pending.clear()
            self._closed = True
        stop_background(executor, api, log=log, name="retaindb")

    # ------------------------------------------------------------ tool handlers

    _text_arg = staticmethod(text_arg)

    @staticmethod
    def _guard(fn: Callable[[], str]) -> str:
        return guard_tool(fn, log=log, name="retaindb", not_found_prefix=True)

    @staticmethod
    def _screened(memories: Sequence[Memory]) -> tuple[list[Memory], int]:
        kept = [m for m in memories if not _flagged(m.content)]
        return kept, len(memories) - len(kept)

    def _listing(self, memories: Sequence[Memory], **extra: Any) -> str:
        kept, withheld = self._screened(memories)
        payload: dict[str, Any] = {
            "success": True,
            **extra,
            "results": [m.as_json() for m in kept],
            "count": len(kept),
        }
        if withheld:
            payload["withheld"] = withheld
        return _json(payload)

    def _tool_profile(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        session = ctx.session
        return self._guard(
            lambda: self._listing(
                self.api().profile(self.user(session)), user_id=self.user(session)
            )
        )

    def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = self._text_arg(args, "query")
        if query is None:
            return _fail("'query' is required: pass what to search for as a string")
        if len(query) > MAX_QUERY_CHARS:
            return _fail(f"'query' is too long ({len(query)} chars; max {MAX_QUERY_CHARS})")
        top_k = args.get("top_k", self.settings.top_k)
        if isinstance(top_k, bool) or not isinstance(top_k, int | float) or not 1 <= top_k <= 20:
            return _fail("'top_k' must be an integer between 1 and 20")
        return self._guard(lambda: self._listing(self.search(ctx.session, query, top_k=int(top_k))))

    def _tool_context(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = self._text_arg(args, "query")
        if query is None:
            return _fail("'query' is required: pass the task or question as a string")

        def run() -> str:
            session = ctx.session
            profile = self.api().profile(self.user(session))
            found = self.search(session, query)
            kept_profile, w1 = self._screened(profile[:5])
            kept_found, w2 = self._screened(found)
            lines = ["Profile:"]
            lines += [f"- {_compact(m.content)}" for m in kept_profile] or ["- (none)"]
            lines.append("Relevant memories:")
            seen = {_compact(m.content) for m in kept_profile}
            relevant = [m for m in kept_found if _compact(m.content) not in seen]
            lines += [f"- {_compact(m.content)}" for m in relevant] or ["- (none)"]
            payload: dict[str, Any] = {
                "success": True,
                "context": "\n".join(lines),
                "count": len(kept_profile) + len(relevant),
            }
            if w1 + w2:
                payload["withheld"] = w1 + w2
            return _json(payload)

        return self._guard(run)

    def _tool_remember(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        content = self._text_arg(args, "content")
        if content is None:
            return _fail("'content' is required: pass the fact to remember as a string")
        if len(content) > MAX_CONTENT_CHARS:
            return _fail(f"'content' is too long ({len(content)} chars; max {MAX_CONTENT_CHARS})")
        memory_type = args.get("memory_type", "factual")
        if memory_type not in MEMORY_TYPES:
            return _fail(f"'memory_type' must be one of {', '.join(MEMORY_TYPES)}")
        importance = args.get("importance", self.settings.default_importance)
        if (
            isinstance(importance, bool)
            or not isinstance(importance, int | float)
            or not 0 <= importance <= 1
        ):
            return _fail("'importance' must be a number between 0 and 1")
        session = ctx.session

        def run() -> str:
            uid = self.user(session)
            memory_id = self.api().remember(
                uid,
                content,
                memory_type=str(memory_type),
                importance=float(importance),
                session_id=session.id,
                agent_id=self.settings.agent_id,
                write_mode="sync",
                metadata={"source": "hermes:retaindb_remember"},
                key=idempotency_key(self.project, uid, "tool", content),
            )
            return _json({"success": True, "memory_id": memory_id, "memory_type": memory_type})

        return self._guard(run)

    def _tool_forget(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory_id = self._text_arg(args, "memory_id")
        if memory_id is None:
            return _fail("'memory_id' is required (ids come from retaindb_search)")
        session = ctx.session

        def run() -> str:
            memory = self.api().get(memory_id)
            if memory.user_id != self.user(session):
                # someone else's (or a project-wide) memory: never confirm it exists
                return _fail(f"not found: no memory with id {memory_id!r}")
            self.api().delete(memory_id)
            return _json({"success": True, "memory_id": memory_id, "deleted": True})

        return self._guard(run)


def merge(first: Sequence[Memory], then: Sequence[Memory]) -> list[Memory]:
    """``first`` then ``then`` without repeating a memory (same id or same text)."""
    seen_ids: set[str] = set()
    seen_text: set[str] = set()
    out: list[Memory] = []
    for memory in [*first, *then]:
        text = _compact(memory.content).lower()
        if not text or (memory.id and memory.id in seen_ids) or text in seen_text:
            continue
        seen_ids.add(memory.id)
        seen_text.add(text)
        out.append(memory)
    return out


__all__ = ["HEADING", "LABEL", "RetainDBProvider", "merge"]
