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
* built on the service frame (:class:`~hermes_core.providers.service.BackgroundRecall`);
  the tools leave out memories the threat scanner flags and count them in ``withheld``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hermes_core.markers import hookimpl
from hermes_core.providers.service import (
    BackgroundRecall,
    ServiceClient,
    ServiceError,
    ServiceNotFound,
    ToolRefused,
    unflagged,
)
from hermes_core.providers.service.tools import (
    memory_tool,
    number_arg,
    param,
    required_text,
    text_arg,
)
from hermes_core.tool_results import tool_ok
from hermes_core.types import MemoryContext, MemoryWrite, SessionInfo, ToolContext, Turn
from hermes_memory_retaindb.api import Memory, RetainDBAPI, idempotency_key
from hermes_memory_retaindb.settings import MEMORY_TYPES, RetainDBSettings

if TYPE_CHECKING:
    from hermes_core.types import ChatMessage

log = logging.getLogger(__name__)

LABEL = "RetainDB"
HEADING = "## RetainDB Memory"
MAX_CONTENT_CHARS = 10_000  # the API's limit for one memory
MAX_MESSAGE_CHARS = 20_000
MAX_QUERY_CHARS = 5_000  # the API's limit for a search query
TEXT = param("string", required=True)
_SPACE = re.compile(r"\s+")


def _compact(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def _text(memory: Memory) -> str:
    return memory.content


class RetainDBProvider(BackgroundRecall[RetainDBSettings, RetainDBAPI, Memory]):
    """RetainDB as the external memory provider."""

    name = "retaindb"
    service = LABEL
    recall_heading = HEADING
    workers = 3
    not_found_prefix = True
    breaker_fix = "check RETAINDB_API_KEY and RETAINDB_BASE_URL; calls resume automatically"

    def __init__(self, settings: Any, home: Any, **kwargs: Any) -> None:
        super().__init__(settings, home, **kwargs)
        self.project = self.settings.project_for(self.home)

    # ------------------------------------------------------------ plumbing

    def client_options(self) -> dict[str, Any]:
        return {
            **super().client_options(),
            "headers": {"x-sdk-runtime": "hermes-core"},
            "connect_timeout": min(self.settings.timeout, 5.0),
        }

    def make_api(self, client: ServiceClient) -> RetainDBAPI:
        return RetainDBAPI(client, self.project)

    def health_summary(self) -> tuple[str, str]:
        return f"retaindb ({self.settings.base_url}, project {self.project})", "configured"

    def user(self, session: SessionInfo) -> str:
        """The user every call of ``session`` is scoped to."""
        return session.user_id or self.settings.user_id

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

    def auto_recall(self, session: SessionInfo, query: str) -> list[Memory]:
        """What automatic recall injects: profile memories first, then search results,
        without duplicates."""
        budget = self.settings.prefetch_wait
        profile_future = (
            self.submit(lambda: self.api().profile(self.user(session), deadline=budget))
            if self.settings.profile_in_context > 0
            else None
        )
        found = self.search(session, query, deadline=budget)
        profile: list[Memory] = []
        if profile_future is not None:
            try:
                profile = profile_future.result(timeout=budget)
            except (TimeoutError, ServiceError) as exc:
                log.info("retaindb profile skipped: %s", exc)
        return merge(profile[: self.settings.profile_in_context], found)

    recall = auto_recall

    # ------------------------------------------------------------ hooks

    def prompt_text(self, session: SessionInfo) -> str:
        return (
            "# RetainDB Memory\n"
            f"Active. Project: {self.project}.\n"
            "Use retaindb_search to find memories, retaindb_remember to store facts, "
            "retaindb_profile for a user overview, retaindb_context for current-task "
            "context, retaindb_forget to delete a memory by id."
        )

    def format_context(self, items: Sequence[Memory]) -> MemoryContext | None:
        """``## RetainDB Memory`` and one ``- memory`` line each (None if none), with each
        memory's search score when the API returned one for every item."""
        shown = [m for m in items if _compact(m.content)]
        lines = [f"- {_compact(m.content)}" for m in shown]
        return self.recalled_context(lines, [m.score for m in shown])

    def _turn_messages(self, turn: Turn) -> list[dict[str, str]]:
        stamp = _iso(turn.ended_at)
        return [
            {"role": role, "content": text.strip()[:MAX_MESSAGE_CHARS], "timestamp": stamp}
            for role, text in (("user", turn.user_text), ("assistant", turn.reply))
            if text and text.strip()
        ]

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        if self.settings.ingest != "turn" or self._closed:
            return
        messages = self._turn_messages(turn)
        if messages and self.first_sync(session, turn):
            self._ingest_later(session, messages, str(turn.number))

    def _find_own(self, session: SessionInfo, content: str) -> list[Memory]:
        wanted = _compact(content)
        return [m for m in self.search(session, wanted, top_k=20) if _compact(m.content) == wanted]

    def _ingest_later(
        self, session: SessionInfo, messages: Sequence[Mapping[str, str]], label: str
    ) -> None:
        """Ingest ``messages`` through the outbox (the ``Idempotency-Key`` makes a re-send
        harmless)."""
        uid = self.user(session)
        key = idempotency_key(self.project, uid, session.id, label)
        agent, mode = self.settings.agent_id, self.settings.write_mode

        def write() -> None:
            self.api().ingest(uid, session.id, messages, agent_id=agent, write_mode=mode, key=key)

        self.send_later(f"ingest:{key}", write)

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
        self.send_later(f"mirror:{label}", mirror)

    def compress_recall(self, session: SessionInfo, query: str) -> list[str]:
        found = self.search(session, query, deadline=self.settings.prefetch_wait)
        return [m.content for m in found]

    @hookimpl
    def on_session_end(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> None:
        self.forget_session(session)
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
        if transcript:
            self._ingest_later(session, transcript, f"session:{len(transcript)}")

    # ------------------------------------------------------------ tool handlers

    def _listing(self, memories: Sequence[Memory], **extra: Any) -> str:
        kept, withheld = unflagged(memories, _text)
        payload: dict[str, Any] = {
            **extra,
            "results": [m.as_json() for m in kept],
            "count": len(kept),
        }
        if withheld:
            payload["withheld"] = withheld
        return tool_ok(**payload)

    @memory_tool("retaindb_profile", read_only=True)
    def _tool_profile(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Get the user's stable profile: preferences, facts and patterns recalled from
        long-term memory."""
        uid = self.user(ctx.session)
        return self._listing(self.api().profile(uid), user_id=uid)

    @memory_tool(
        "retaindb_search", read_only=True, query=TEXT, top_k=param("integer", minimum=1, maximum=20)
    )
    def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Search the user's long-term memories (vector + keyword, reranked). Returns ranked
        results with ids.

        query: What to search for.
        top_k: Max results (default 8, max 20).
        """
        query = required_text(args, "query", "pass what to search for as a string", MAX_QUERY_CHARS)
        top_k = number_arg(args, "top_k", self.settings.top_k, 1, 20)
        return self._listing(self.search(ctx.session, query, top_k=int(top_k)))

    @memory_tool("retaindb_context", read_only=True, query=TEXT)
    def _tool_context(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """What long-term memory says about the current task: the user's profile plus the
        memories relevant to it, as one block.

        query: The task or question.
        """
        query = required_text(args, "query", "pass the task or question as a string")
        session = ctx.session
        profile = self.api().profile(self.user(session))
        found = self.search(session, query)
        kept_profile, w1 = unflagged(profile[:5], _text)
        kept_found, w2 = unflagged(found, _text)
        lines = ["Profile:"]
        lines += [f"- {_compact(m.content)}" for m in kept_profile] or ["- (none)"]
        lines.append("Relevant memories:")
        seen = {_compact(m.content) for m in kept_profile}
        relevant = [m for m in kept_found if _compact(m.content) not in seen]
        lines += [f"- {_compact(m.content)}" for m in relevant] or ["- (none)"]
        payload: dict[str, Any] = {
            "context": "\n".join(lines),
            "count": len(kept_profile) + len(relevant),
        }
        if w1 + w2:
            payload["withheld"] = w1 + w2
        return tool_ok(**payload)

    @memory_tool(
        "retaindb_remember",
        content=TEXT,
        memory_type=param("string", enum=list(MEMORY_TYPES)),
        importance=param("number", minimum=0, maximum=1),
    )
    def _tool_remember(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Store an explicit fact, preference or decision in long-term memory.

        content: The fact to remember.
        memory_type: Category (default factual).
        importance: Importance 0-1 (default 0.7).
        """
        content = required_text(
            args, "content", "pass the fact to remember as a string", MAX_CONTENT_CHARS
        )
        memory_type = args.get("memory_type", "factual")
        if memory_type not in MEMORY_TYPES:
            raise ToolRefused(f"'memory_type' must be one of {', '.join(MEMORY_TYPES)}")
        importance = number_arg(args, "importance", self.settings.default_importance, 0, 1)
        session = ctx.session
        uid = self.user(session)
        memory_id = self.api().remember(
            uid,
            content,
            memory_type=str(memory_type),
            importance=importance,
            session_id=session.id,
            agent_id=self.settings.agent_id,
            write_mode="sync",
            metadata={"source": "hermes:retaindb_remember"},
            key=idempotency_key(self.project, uid, "tool", content),
        )
        return tool_ok(memory_id=memory_id, memory_type=memory_type)

    @memory_tool("retaindb_forget", memory_id=TEXT)
    def _tool_forget(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Delete one of the user's memories by id (ids come from retaindb_search or
        retaindb_profile).

        memory_id: Memory id to delete.
        """
        memory_id = text_arg(args, "memory_id")
        if memory_id is None:
            raise ToolRefused("'memory_id' is required (ids come from retaindb_search)")
        memory = self.api().get(memory_id)
        if memory.user_id != self.user(ctx.session):
            # someone else's (or a project-wide) memory: never confirm it exists
            raise ToolRefused(f"not found: no memory with id {memory_id!r}")
        self.api().delete(memory_id)
        return tool_ok(memory_id=memory_id, deleted=True)


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
