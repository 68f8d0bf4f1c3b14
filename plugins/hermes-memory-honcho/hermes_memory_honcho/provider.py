"""Honcho (Plastic Labs) as the external memory provider of hermes-core.

Scoping (spec §4; issue 15): one Honcho **workspace** (``workspace``) per agent; the **user
peer** comes from ``session.user_id`` (``peer_name`` or ``user`` when the session has none;
see :mod:`hermes_memory_honcho.ids`); one **AI peer** per agent profile (``ai_peer``). Every
read names the user's peer: in ``directional`` observation the AI peer's view *of this user*
(``target=<user peer>``), in ``unified`` the user peer's view of itself. Tools accept only the
aliases ``user`` and ``ai`` (``ai`` = the AI peer as seen within this user's scope), never a
raw peer id, so one user can never read another's peer. Honcho session ids hash the user's
peer with the scope, so users never share a session.

Hooks:

* ``prefetch`` — the base context (representation + peer card), refreshed in the background
  every ``context_cadence`` turns and fetched live when missing, plus a live search of the
  user's messages for this turn's query and the latest dialectic supplement; bounded by
  ``timeout`` (the host bounds it by ``memory.prefetch_timeout`` too);
* ``sync`` — the turn's messages (chunked at ``message_max_chars``), written in turn order;
  a turn already written is never written again; a failed write stays queued and goes first
  next time (``write_frequency`` ``session`` or N batches them). Then, in the background, the
  base context is refreshed every ``context_cadence`` turns and the dialectic
  (``peer chat``) asked every ``dialectic_cadence`` turns, for the next prefetch;
* ``on_memory_write`` — built-in USER.md writes become Honcho conclusions about the user;
* ``on_pre_compress`` — the session summary and the user's representation, as source
  material for the handoff summary;
* ``on_session_end`` — flushes anything still queued;
* tools ``honcho_profile``, ``honcho_search``, ``honcho_context``, ``honcho_reasoning``,
  ``honcho_conclude`` (JSON; recalled text passes the shared screening).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.context import dedupe_bullets
from hermes_core.markers import hookimpl
from hermes_core.providers.base import ProviderSettings
from hermes_core.providers.service import (
    ServiceClient,
    ServiceError,
    ServiceNotFound,
    ServiceProvider,
    screen_recalled,
)
from hermes_core.providers.service.tools import (
    ToolRefused,
    memory_tool,
    param,
    screened_ok,
    text_arg,
)
from hermes_core.tool_results import tool_error, tool_ok
from hermes_core.types import MemoryContext, MemoryWrite, SessionInfo, ToolContext, Turn
from hermes_memory_honcho.api import HonchoAPI
from hermes_memory_honcho.ids import honcho_id, session_key
from hermes_memory_honcho.settings import CONFIG_FILE, KEY_URL, HonchoSettings, read_honcho_json

log = logging.getLogger(__name__)

LABEL = "Honcho"
LEVELS = ("minimal", "low", "medium", "high", "max")
PEER = param(
    "string",
    enum=["user", "ai"],
    description="Whose view: 'user' (default) or 'ai' (the assistant as this user sees it).",
)
MAX_PENDING = 500
"""Queued messages kept per session while Honcho is unreachable (oldest dropped, logged)."""
_SEEN_TURNS = 4096


def _chunks(text: str, size: int) -> list[str]:
    if len(text) <= size:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _strip_recalled(text: str) -> str:
    from hermes_core.context import strip_memory_context

    return strip_memory_context(text).strip()


class _UserState:
    """Per-user cache of background work (guarded by the provider lock)."""

    def __init__(self) -> None:
        self.base: str = ""
        self.base_turn: int = -(10**9)
        self.dialectic: str = ""
        self.busy: bool = False
        self.turns: int = 0
        """Turns synced for this user (all sessions): the cadences count these."""


class HonchoProvider(ServiceProvider[HonchoSettings, HonchoAPI]):
    """Honcho over its v3 REST API (see :mod:`hermes_memory_honcho.api`)."""

    name = "honcho"
    service = LABEL
    config_file = CONFIG_FILE
    workers = 1

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        self.cfg: HonchoSettings = self.settings
        self.breaker_fix = (
            f"check that Honcho is reachable at {self.cfg.base_url} and HONCHO_API_KEY"
        )
        self._write_lock = threading.Lock()
        self._pending: dict[str, list[dict[str, Any]]] = {}
        self._pending_turns: dict[str, int] = {}
        self._written: OrderedDict[tuple[str, int, int], None] = OrderedDict()
        self._users: OrderedDict[str, _UserState] = OrderedDict()

    def config_values(self) -> dict[str, Any]:
        return read_honcho_json(self.home)

    # -- identity

    def unavailable_reason(self) -> str:
        if self.cfg.api_key is not None or self.cfg.is_self_hosted():
            return ""
        return (
            f"Honcho Cloud needs an API key: set HONCHO_API_KEY (get one at {KEY_URL}) or run "
            "`hermes-memory memory setup honcho`; for a self-hosted Honcho set HONCHO_BASE_URL."
        )

    def health_summary(self) -> tuple[str, str]:
        where = "self-hosted " + self.cfg.base_url if self.cfg.is_self_hosted() else "Honcho Cloud"
        return f"honcho ({where})", f"workspace {self.cfg.workspace}"

    # -- plumbing

    def make_api(self, client: ServiceClient) -> HonchoAPI:
        return HonchoAPI(client, self.cfg.workspace)

    def _background(self, fn: Callable[[], None]) -> bool:
        """Run ``fn`` on the provider's background thread; False if shut down."""
        try:
            self.submit(fn)
        except RuntimeError:  # shut down (meanwhile)
            return False
        return True

    def user_peer(self, session: SessionInfo) -> str:
        raw = session.user_id or self.cfg.peer_name or "user"
        return honcho_id(raw, reserved=frozenset({self.cfg.ai_peer}))

    def honcho_session(self, session: SessionInfo) -> str:
        return session_key(
            self.cfg.session_strategy,
            user_peer=self.user_peer(session),
            session_id=session.id,
            cwd=Path.cwd(),
        )

    def _view(self, session: SessionInfo, peer: str = "user") -> tuple[str, str | None]:
        """``(observer, target)`` for the alias ``peer`` within this user's scope."""
        user = self.user_peer(session)
        ai = self.cfg.ai_peer
        if peer == "ai":
            return user, ai
        if self.cfg.observation_mode == "unified":
            return user, None
        return ai, user

    def _peers_config(self, session: SessionInfo) -> dict[str, dict[str, bool]]:
        unified = self.cfg.observation_mode == "unified"
        return {
            self.user_peer(session): {"observe_me": True, "observe_others": False},
            self.cfg.ai_peer: {"observe_me": False, "observe_others": not unified},
        }

    def _state(self, user: str) -> _UserState:
        with self._lock:
            state = self._users.get(user)
            if state is None:
                state = self._users[user] = _UserState()
                while len(self._users) > _SEEN_TURNS:
                    self._users.popitem(last=False)
            self._users.move_to_end(user)
            return state

    # -- prefetch

    def _base_context(self, session: SessionInfo, deadline: float | None) -> str:
        observer, target = self._view(session)
        try:
            ctx = self.api().peer_context(observer, target, deadline=deadline)
        except ServiceNotFound:
            return ""
        parts: list[str] = []
        representation = ctx.get("representation")
        if isinstance(representation, str) and representation.strip():
            parts.append("## What Honcho knows about the user\n" + representation.strip())
        card = ctx.get("peer_card")
        if isinstance(card, list) and card:
            parts.append("## Peer card\n" + "\n".join(f"- {item}" for item in card))
        return "\n\n".join(parts)

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        if self.cfg.recall_mode == "tools" or not self.is_available():
            return None
        user = self.user_peer(session)
        state = self._state(user)
        started = time.monotonic()
        budget = self.cfg.timeout

        def left() -> float:
            return max(0.05, budget - (time.monotonic() - started))

        with self._lock:
            base, dialectic = state.base, state.dialectic
        sections: list[str] = []
        if not base:
            try:
                base = self._base_context(session, left())
                with self._lock:
                    state.base = base
            except ServiceError as exc:
                self.log_failure("context", exc)
        if base:
            base = dedupe_bullets(base)
            sections.append(base)
        hits: list[str] = []
        try:
            found = self.api().peer_search(user, query[:2000], self.cfg.search_limit, left())
            hits = [str(m.get("content", "")) for m in found if m.get("content")]
        except ServiceNotFound:
            pass
        except ServiceError as exc:
            self.log_failure("search", exc)
        known = " ".join(base.split())
        hits = [h for h in _dedupe(hits) if " ".join(h.split()) not in known]
        if hits:
            sections.append(
                "## Related things the user said\n"
                + "\n".join(f"- {' '.join(h.split())[:500]}" for h in hits)
            )
        if dialectic:
            sections.append("## Honcho's read on the user\n" + dialectic)
        text = "\n\n".join(sections).strip()[: self.cfg.prefetch_max_chars]
        if not text:
            return None
        return MemoryContext(text, count=len(hits) + (1 if base else 0), label=LABEL)

    def _schedule_refresh(self, session: SessionInfo, turn: Turn) -> None:
        """After a turn is written: refresh the base context every ``context_cadence`` turns
        and ask the dialectic every ``dialectic_cadence`` turns, on the provider's own
        background thread, for the next prefetch. Called from ``sync`` (which the host runs
        on its background worker, in turn order), so the refresh sees the turn."""
        if self.cfg.recall_mode == "tools":
            return
        user = self.user_peer(session)
        state = self._state(user)
        with self._lock:
            state.turns += 1
            count = state.turns
            if state.busy:
                return
            refresh = count - state.base_turn >= self.cfg.context_cadence
            ask = count % self.cfg.dialectic_cadence == 0
            if not (refresh or ask):
                return
            state.busy = True
        query = _strip_recalled(turn.user_text)

        def work() -> None:
            try:
                if refresh:
                    base = self._base_context(session, None)
                    with self._lock:
                        state.base, state.base_turn = base, count
                if ask and query:
                    answer = self._dialectic(session, query)
                    with self._lock:
                        state.dialectic = answer
            except ServiceError as exc:
                self.log_failure("background refresh", exc)
            finally:
                with self._lock:
                    state.busy = False

        if not self._background(work):
            with self._lock:
                state.busy = False

    def _level(self, query: str) -> str:
        level = self.cfg.dialectic_reasoning_level
        if self.cfg.dialectic_dynamic and len(query) > 400 and level in LEVELS[:3]:
            level = LEVELS[LEVELS.index(level) + 1]  # type: ignore[assignment]
        return level

    def _dialectic(self, session: SessionInfo, query: str) -> str:
        observer, target = self._view(session)
        self.api().ensure_peer(observer)
        if target:
            self.api().ensure_peer(target)
        question = (
            "What should the assistant keep in mind about the user to answer this message "
            f"well? Message: {query}"
        )[: self.cfg.dialectic_max_input_chars]
        answers: list[str] = []
        for depth in range(self.cfg.dialectic_depth):
            if depth:
                question = (
                    "Anything else relevant beyond this? Answer only with new facts. "
                    f"Already known: {answers[-1]}"
                )[: self.cfg.dialectic_max_input_chars]
            answer = (
                self.api()
                .chat(observer, question, target=target, reasoning_level=self._level(query))
                .strip()
            )
            if not answer or answer in answers:
                break
            answers.append(answer)
        kept, _ = screen_recalled(answers, "honcho dialectic")
        return "\n".join(kept)[: self.cfg.dialectic_max_chars]

    # -- writes

    def _messages_for(self, session: SessionInfo, turn: Turn) -> list[dict[str, Any]]:
        user, ai = self.user_peer(session), self.cfg.ai_peer
        out: list[dict[str, Any]] = []
        for peer, text in ((user, _strip_recalled(turn.user_text)), (ai, turn.reply.strip())):
            for index, chunk in enumerate(_chunks(text, self.cfg.message_max_chars)):
                if chunk.strip():
                    out.append(
                        {
                            "peer_id": peer,
                            "content": chunk,
                            "metadata": {
                                "source": "hermes",
                                "hermes_session": session.id,
                                "turn": turn.number,
                                "chunk": index,
                            },
                        }
                    )
        return out

    def _flush(self, session: SessionInfo) -> None:
        """Write the queued messages of ``session`` in order; on failure keep them queued."""
        sid = self.honcho_session(session)
        with self._write_lock:
            with self._lock:
                batch = list(self._pending.get(sid, []))
            if not batch:
                return
            try:
                self.api().ensure_session(sid, self._peers_config(session), None)
                self.api().add_messages(sid, batch, None)
            except ServiceError as exc:
                self.log_failure(f"write of {len(batch)} queued messages", exc)
                return
            with self._lock:
                self._pending[sid] = self._pending.get(sid, [])[len(batch) :]
                self._pending_turns[sid] = 0

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        if not self.is_available():
            return
        if self.cfg.save_messages:
            self._write_turn(session, turn)
        self._schedule_refresh(session, turn)

    def _write_turn(self, session: SessionInfo, turn: Turn) -> None:
        key = (session.id, turn.number, hash((turn.user_text, turn.reply)))
        sid = self.honcho_session(session)
        with self._lock:
            if key in self._written:
                return
            self._written[key] = None
            while len(self._written) > _SEEN_TURNS:
                self._written.popitem(last=False)
            queue = self._pending.setdefault(sid, [])
            queue.extend(self._messages_for(session, turn))
            if len(queue) > MAX_PENDING:
                dropped = len(queue) - MAX_PENDING
                del queue[:dropped]
                log.warning(
                    "honcho: %d queued messages dropped while Honcho is unreachable "
                    "(kept the newest %d)",
                    dropped,
                    MAX_PENDING,
                )
            self._pending_turns[sid] = self._pending_turns.get(sid, 0) + 1
            turns = self._pending_turns[sid]
        mode = self.cfg.write_frequency
        if mode == "session":
            return
        if isinstance(mode, int) and turns < mode:
            return
        self._flush(session)

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        if self.is_available():
            self._flush(session)

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        if write.target != "user" or not self.is_available():
            return
        observer, target = self._view(session)
        observed = target or observer
        try:
            if write.action in ("replace", "remove") and write.previous_content:
                self._delete_matching(observer, observed, write.previous_content)
            if write.action in ("add", "replace") and write.content.strip():
                self.api().ensure_peer(observer)
                self.api().ensure_peer(observed)
                self.api().create_conclusions(
                    [
                        {
                            "content": write.content.strip(),
                            "observer_id": observer,
                            "observed_id": observed,
                        }
                    ]
                )
        except ServiceError as exc:
            self.log_failure("memory mirror", exc)

    def _owned(self, observer: str, observed: str, pages: int = 5) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        filters = {"observer_id": observer, "observed_id": observed}
        for page in range(1, pages + 1):
            items, total_pages = self.api().list_conclusions(filters, size=100, page=page)
            found.extend(
                item
                for item in items
                if item.get("observer_id") == observer and item.get("observed_id") == observed
            )
            if page >= total_pages:
                break
        return found

    def _delete_matching(self, observer: str, observed: str, content: str) -> None:
        for item in self._owned(observer, observed):
            if str(item.get("content", "")).strip() == content.strip():
                self.api().delete_conclusion(str(item["id"]))

    @hookimpl
    def on_pre_compress(self, session: SessionInfo) -> str | None:
        if not self.is_available():
            return None
        self._flush(session)
        observer, target = self._view(session)
        try:
            ctx = self.api().session_context(
                self.honcho_session(session),
                tokens=self.cfg.context_tokens,
                perspective=observer,
                target=target,
                deadline=self.cfg.timeout,
            )
        except ServiceError as exc:
            self.log_failure("pre-compress context", exc)
            return None
        parts: list[str] = []
        summary = ctx.get("summary")
        if isinstance(summary, dict) and summary.get("content"):
            parts.append(f"Honcho session summary: {summary['content']}")
        representation = ctx.get("peer_representation")
        if isinstance(representation, str) and representation.strip():
            parts.append(f"What Honcho has concluded about the user:\n{representation.strip()}")
        kept, _ = screen_recalled(parts, "honcho pre-compress")
        return "\n\n".join(kept) or None

    # -- tools

    def tools_on(self, session: SessionInfo) -> bool:
        return self.cfg.recall_mode != "context" and self.is_available()

    def _peer_arg(self, args: Mapping[str, Any]) -> str:
        peer = args.get("peer", "user")
        if peer not in ("user", "ai"):
            raise ToolRefused("peer must be 'user' or 'ai'")
        return str(peer)

    def _query_arg(self, args: Mapping[str, Any]) -> str:
        query = text_arg(args, "query")
        if not query:
            raise ToolRefused("query is required")
        return query

    @memory_tool(
        "honcho_profile",
        peer=PEER,
        card=param("array", items={"type": "string"}, maxItems=50),
    )
    def _tool_profile(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Read or write the user's peer CARD: a short list of standing facts (name, role,
        preferences). Pass `card` to overwrite it; omit it to read. Cheapest Honcho call, no LLM."""
        peer = self._peer_arg(args)
        observer, target = self._view(ctx.session, peer)
        card = args.get("card")

        self.api().ensure_peer(observer)
        if target:
            self.api().ensure_peer(target)
        if card is not None:
            if not isinstance(card, list) or not all(isinstance(c, str) for c in card):
                return tool_error("card must be a list of strings")
            stored = self.api().set_card(observer, target, [c.strip() for c in card if c.strip()])
            return tool_ok(card=stored)
        kept, dropped = screen_recalled(self.api().get_card(observer, target), "honcho card")
        if not kept:
            hint = "The card is empty: Honcho fills it over time from observed conversation."
            return screened_ok(dropped, card=kept, hint=hint)
        return screened_ok(dropped, card=kept)

    @memory_tool(
        "honcho_search",
        read_only=True,
        query=param("string", required=True, minLength=1),
        max_tokens=param("integer", minimum=50, maximum=2000),
        peer=PEER,
    )
    def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Search what the user actually said across all their past sessions (hybrid semantic +
        keyword, raw excerpts, no LLM). Use it to recall a specific fact."""
        peer = self._peer_arg(args)
        query = self._query_arg(args)
        budget = args.get("max_tokens", 800)
        max_chars = max(200, min(8000, int(budget) * 4 if isinstance(budget, int) else 3200))

        session = ctx.session
        try:
            if peer == "ai":
                found = self.api().session_search(
                    self.honcho_session(session),
                    query,
                    self.cfg.search_limit,
                    peer_id=self.cfg.ai_peer,
                )
            else:
                found = self.api().peer_search(
                    self.user_peer(session), query, self.cfg.search_limit
                )
        except ServiceNotFound:  # nothing written for this user (or session) yet
            found = []
        texts = [str(m.get("content", "")) for m in found if m.get("content")]
        kept, dropped = screen_recalled(_dedupe(texts), "honcho search")
        results, used = [], 0
        for text in kept:
            if used + len(text) > max_chars:
                text = text[: max(0, max_chars - used)]
            if not text:
                break
            results.append(text)
            used += len(text)
        return screened_ok(dropped, results=results, count=len(results))

    @memory_tool("honcho_context", read_only=True, peer=PEER)
    def _tool_context(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Snapshot of what Honcho holds for this session: summary, the user's representation, the
        peer card and recent messages. No query, no LLM."""
        peer = self._peer_arg(args)
        observer, target = self._view(ctx.session, peer)

        self._flush(ctx.session)
        try:
            data = self.api().session_context(
                self.honcho_session(ctx.session),
                tokens=self.cfg.context_tokens,
                perspective=observer,
                target=target,
            )
        except ServiceNotFound:
            return tool_ok(summary=None, representation="", card=[], messages=[])
        summary = data.get("summary")
        summary_text = summary.get("content") if isinstance(summary, dict) else None
        representation = str(data.get("peer_representation") or "")
        card = data.get("peer_card") if isinstance(data.get("peer_card"), list) else []
        messages = [
            f"{m.get('peer_id')}: {m.get('content')}"
            for m in data.get("messages") or []
            if isinstance(m, dict)
        ]
        texts = [summary_text or "", representation, *map(str, card or []), *messages]
        kept, dropped = screen_recalled([t for t in texts if t], "honcho context")
        allowed = set(kept)
        return screened_ok(
            dropped,
            summary=summary_text if summary_text in allowed else None,
            representation=representation if representation in allowed else "",
            card=[c for c in map(str, card or []) if c in allowed],
            messages=[m for m in messages[-20:] if m in allowed],
        )

    @memory_tool(
        "honcho_reasoning",
        read_only=True,
        query=param("string", required=True, minLength=1),
        reasoning_level=param("string", enum=list(LEVELS)),
        peer=PEER,
    )
    def _tool_reasoning(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Ask Honcho's dialectic a question about the user and get a synthesized answer (runs an
        LLM on Honcho's side: slowest call). reasoning_level: minimal, low (default), medium,
        high, max."""
        peer = self._peer_arg(args)
        query = self._query_arg(args)
        level = args.get("reasoning_level") or self._level(query)
        if level not in LEVELS:
            return tool_error(f"reasoning_level must be one of {', '.join(LEVELS)}")
        observer, target = self._view(ctx.session, peer)

        self.api().ensure_peer(observer)
        if target:
            self.api().ensure_peer(target)
        answer = self.api().chat(
            observer,
            query[: self.cfg.dialectic_max_input_chars],
            target=target,
            reasoning_level=str(level),
        )
        kept, dropped = screen_recalled([answer] if answer else [], "honcho reasoning")
        return screened_ok(dropped, answer=kept[0] if kept else "", level=level)

    @memory_tool(
        "honcho_conclude",
        conclusion=param("string", minLength=1),
        list=param("boolean"),
        query=param("string"),
        delete_id=param("string", minLength=1),
        peer=PEER,
    )
    def _tool_conclude(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Write, list or delete CONCLUSIONS: durable facts about the user that feed their profile.
        Pass exactly one of `conclusion` (create), `list` (list, or search with `query`) or
        `delete_id` (delete one from a prior list; for PII removal)."""
        peer = self._peer_arg(args)
        conclusion = text_arg(args, "conclusion") or ""
        delete_id = text_arg(args, "delete_id") or ""
        listing = bool(args.get("list"))
        if sum(map(bool, (conclusion, delete_id, listing))) != 1:
            return tool_error("pass exactly one of `conclusion`, `delete_id` or `list`")
        observer, target = self._view(ctx.session, peer)
        observed = target or observer

        self.api().ensure_peer(observer)
        self.api().ensure_peer(observed)
        if conclusion:
            made = self.api().create_conclusions(
                [{"content": conclusion, "observer_id": observer, "observed_id": observed}]
            )
            return tool_ok(id=made[0].get("id") if made else None)
        if listing:
            query = text_arg(args, "query") or ""
            filters = {"observer_id": observer, "observed_id": observed}
            items = (
                self.api().query_conclusions(query, filters, self.cfg.search_limit)
                if query
                else self._owned(observer, observed, pages=1)
            )
            items = [
                i
                for i in items
                if i.get("observer_id") == observer and i.get("observed_id") == observed
            ]
            kept, dropped = screen_recalled(
                [str(i.get("content", "")) for i in items], "honcho conclusions"
            )
            allowed = set(kept)
            conclusions = [
                {"id": i.get("id"), "content": i.get("content")}
                for i in items
                if i.get("content") in allowed
            ]
            return screened_ok(dropped, conclusions=conclusions)
        owned = {str(i.get("id")) for i in self._owned(observer, observed)}
        if delete_id not in owned:
            return tool_error(
                f"no conclusion {delete_id!r} about this user; list them first "
                "(honcho_conclude with list=true)"
            )
        self.api().delete_conclusion(delete_id)
        return tool_ok(deleted=delete_id)

    # -- shutdown

    def unsent_writes(self) -> int:
        with self._lock:
            return sum(len(queue) for queue in self._pending.values())

    def shutdown(self) -> None:
        super().shutdown()
        with self._lock:
            self._pending.clear()


def _dedupe(texts: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for text in texts:
        key = " ".join(text.split())
        if key and key not in seen:
            seen.add(key)
            out.append(text)
    return out


__all__ = ["HonchoProvider"]
