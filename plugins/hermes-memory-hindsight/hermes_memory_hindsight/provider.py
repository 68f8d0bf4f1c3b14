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
* the frame (:class:`~hermes_core.providers.service.BackgroundRecall`) runs the client,
  breaker, outbox and health; ``hindsight_recall`` withholds facts the threat scanner flags
  and a flagged ``hindsight_reflect`` answer is refused (the host screens prefetch).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.markers import hookimpl
from hermes_core.providers.base import ProviderSettings
from hermes_core.providers.service import (
    BackgroundRecall,
    ServiceNotFound,
    ToolRefused,
    flagged,
    unflagged,
)
from hermes_core.providers.service.tools import memory_tool, param, required_text, text_arg
from hermes_core.tool_results import tool_ok
from hermes_core.types import MemoryContext, MemoryWrite, SessionInfo, ToolContext, Turn
from hermes_memory_hindsight.api import Fact, HindsightAPI
from hermes_memory_hindsight.banks import render_bank_id, session_tag, user_tag
from hermes_memory_hindsight.settings import HindsightSettings, apply_config_file

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings

log = logging.getLogger(__name__)

LABEL = "Hindsight"
GLYPH = "👁️"
HEADING = "## Hindsight Memory"
MAX_CONTENT_CHARS = 20_000
MAX_QUERY_CHARS = 4_000
TEXT = param("string", required=True)
MAX_TOOL_TAGS = 10


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:20]


def _text(fact: Fact) -> str:
    return fact.text


class HindsightProvider(BackgroundRecall[HindsightSettings, HindsightAPI, Fact]):
    """Hindsight (Vectorize) as the external memory provider: cloud or your own server."""

    name = "hindsight"
    service = LABEL
    url_field = "api_url"
    api_class = HindsightAPI
    recall_heading = HEADING
    breaker_fix = "check the Hindsight server and HINDSIGHT_API_KEY; calls resume automatically"

    def __init__(self, settings: ProviderSettings, home: Path, **kwargs: Any) -> None:
        super().__init__(settings, home, **kwargs)
        self._hermes: HermesSettings | None = None
        self._buffer: dict[str, list[Turn]] = {}
        self._banks_ready: set[str] = set()

    def load_settings(self, settings: ProviderSettings) -> HindsightSettings:
        return apply_config_file(super().load_settings(settings), self.home)

    # ------------------------------------------------------------ availability

    def unavailable_reason(self) -> str:
        s = self.settings
        if s.effective_mode() == "cloud" and not s.key():
            return (
                "Hindsight Cloud needs an API key: set HINDSIGHT_API_KEY (get one at "
                "https://ui.hindsight.vectorize.io) or point HINDSIGHT_API_URL at your own "
                "server; `hermes-memory memory setup hindsight` does both"
            )
        return ""

    def health_summary(self) -> tuple[str, str]:
        s = self.settings
        name = f"hindsight ({s.effective_mode()}, {self.base_url()})"
        return name, f"bank template {s.bank_id_template!r}"

    # ------------------------------------------------------------ plumbing

    def base_url(self) -> str:
        return self.settings.base_url()

    def client_options(self) -> dict[str, Any]:
        return {**super().client_options(), "connect_timeout": min(self.settings.timeout, 5.0)}

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

        self.send_later(f"retain:{bank}:{item['document_id']}", write)

    def _forget_later(self, bank: str, document_id: str) -> None:
        def write() -> None:
            try:
                self.api().delete_document(bank, document_id)
            except ServiceNotFound:
                log.debug("hindsight: no document %s to forget", document_id)

        self.send_later(f"delete:{bank}:{document_id}", write)

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

    def auto_recall(self, session: SessionInfo, query: str) -> list[Fact]:
        """What automatic recall injects: ranked facts, or one reflect answer."""
        s = self.settings
        budget = self.recall_wait(session)
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

    def recall_wait(self, session: SessionInfo | None = None) -> float:
        s = self.settings
        if not s.recall_sync:
            return s.prefetch_wait
        hermes = session.settings if session is not None else self._hermes
        host_budget = hermes.memory.prefetch_timeout if hermes is not None else s.prefetch_wait
        return max(0.1, host_budget - 0.25)

    def auto_recall_on(self) -> bool:
        return self.settings.auto_recall and self.settings.memory_mode != "tools"

    # ------------------------------------------------------------ hooks

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        self._hermes = settings

    def prompt_text(self, session: SessionInfo) -> str:
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
        return f"{head}\n{body}"

    def format_context(self, items: Sequence[Fact]) -> MemoryContext | None:
        """``## Hindsight Memory`` and one ``- fact`` line per fact, at most
        ``recall_max_results`` (None if none); ``scores`` are the API's ``scores.final`` when
        every shown fact has one."""
        lines: list[str] = []
        scores: list[float | None] = []
        for fact in items[: self.settings.recall_max_results]:
            text = " ".join(fact.text.split())
            if text:
                lines.append(f"- {text}")
                scores.append(fact.score)
        return self.recalled_context(lines, scores, glyph=GLYPH)

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
        if not self.settings.auto_retain or self._closed or not self.first_sync(session, turn):
            return  # (a re-sent turn: its document is already stored)
        with self._lock:
            buffered = [t for t in self._buffer.get(session.id, []) if t.number != turn.number]
            buffered.append(turn)
            if len(buffered) < self.settings.retain_every_n_turns:
                self._buffer[session.id] = buffered
                return
            self._buffer.pop(session.id, None)
        self._retain_turns(session, buffered)

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

    def compress_recall(self, session: SessionInfo, query: str) -> list[str]:
        facts = self.recall(session, query, deadline=self.settings.prefetch_wait)
        return [f.text for f in facts]

    def compress_query_chars(self) -> int:
        return self.settings.recall_max_input_chars

    def compress_max_items(self) -> int:
        return self.settings.recall_max_results

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        with self._lock:
            buffered = self._buffer.pop(session.id, [])
        self.forget_session(session)
        if self._closed:
            return
        if buffered:
            self._retain_turns(session, buffered)
        self.outbox.flush()

    def tools_on(self, session: SessionInfo) -> bool:
        return self.settings.memory_mode != "context"

    # ------------------------------------------------------------ tool handlers

    @memory_tool(
        "hindsight_retain",
        content=TEXT,
        context=param("string"),
        tags=param("array", items={"type": "string"}),
    )
    def _tool_retain(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Store information in long-term memory. Hindsight extracts structured facts,
        resolves entities and indexes them for retrieval.

        content: The information to store.
        context: Short label, e.g. 'user preference'.
        tags: Optional tags to file it under.
        """
        content = required_text(
            args, "content", "pass the information to store as a string", MAX_CONTENT_CHARS
        )
        context = text_arg(args, "context")
        raw_tags = args.get("tags") or []
        if not isinstance(raw_tags, list) or not all(isinstance(t, str) for t in raw_tags):
            raise ToolRefused("'tags' must be a list of strings")
        if len(raw_tags) > MAX_TOOL_TAGS:
            raise ToolRefused(f"at most {MAX_TOOL_TAGS} tags")
        tags = [
            t.strip() for t in raw_tags if t.strip() and not t.startswith(("user:", "session:"))
        ]
        session = ctx.session
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
        return tool_ok(result="Memory stored.", document_id=doc)

    @memory_tool("hindsight_recall", read_only=True, query=TEXT)
    def _tool_recall(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Search long-term memory: semantic search, keyword matching, entity graph and
        reranking. Returns the best matching memories.

        query: What to search for.
        """
        query = required_text(args, "query", "pass what to search for as a string", MAX_QUERY_CHARS)
        kept, withheld = unflagged(self.recall(ctx.session, query), _text)
        payload: dict[str, Any] = {"results": [f.as_json() for f in kept], "count": len(kept)}
        if withheld:
            payload["withheld"] = withheld
        if not kept:
            payload["result"] = "No relevant memories found."
        return tool_ok(**payload)

    @memory_tool("hindsight_reflect", read_only=True, query=TEXT)
    def _tool_reflect(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Answer a question by reasoning across all long-term memories (the server
        synthesises one answer).

        query: The question to reflect on.
        """
        query = required_text(args, "query", "pass the question as a string", MAX_QUERY_CHARS)
        session = ctx.session
        text = self.api().reflect(
            self.bank(session),
            query,
            tags=self.scope_tags(session),
            budget=self.settings.recall_budget,
        )
        if flagged(text):
            raise ToolRefused("the reflect answer was withheld: the threat scanner flagged it")
        return tool_ok(answer=text or "No relevant memories found.")


__all__ = ["GLYPH", "HEADING", "LABEL", "HindsightProvider"]
