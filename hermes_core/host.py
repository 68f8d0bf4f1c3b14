"""The Session API: what an agent loop calls.

::

    host = MemoryHost.open()                     # $HERMES_HOME or ~/.hermes
    with host.session(source="cli", user_id="u1") as s:
        system = s.system_prompt()               # frozen: byte-identical all session long
        tools = s.tool_schemas()                 # OpenAI function schemas of every routed tool
        block = s.before_turn(user_text)         # "" or one fenced <memory-context> block
        out = s.call_tool(name, args)            # JSON string; unknown tool -> JSON error
        s.after_turn(user_text, reply, messages) # persist, sync, on_turn_end
        messages = s.maybe_compress(messages, prompt_tokens=..., context_length=...)

One :class:`MemoryHost` per Hermes home; one :class:`Session` per conversation.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import pluggy

from hermes_core.context import (
    build_memory_context_block,
    drop_known_lines,
    is_trivial_prompt,
)
from hermes_core.errors import HermesError
from hermes_core.fsutil import ensure_private_dir
from hermes_core.hooks import HookFacade, ShutdownReport, ToolRouter
from hermes_core.llm.tokens import estimate_messages_tokens, estimate_tokens
from hermes_core.plugins import create_plugin_manager
from hermes_core.providers.base import MemoryProvider
from hermes_core.providers.registry import ProviderRegistry, ProviderStatus
from hermes_core.recall_trace import TraceSource, TraceTurn
from hermes_core.recall_trace import record as record_trace
from hermes_core.scope import check_user_id
from hermes_core.security.redaction import redact
from hermes_core.settings.base import load_settings, resolve_home
from hermes_core.settings.models import CompressionSettings, HermesSettings
from hermes_core.types import (
    ChatMessage,
    CompressionBudget,
    CompressionResult,
    MemoryContext,
    MemoryWrite,
    PromptBlock,
    SessionInfo,
    ToolContext,
    ToolSpec,
    Turn,
    WriteOrigin,
)

log = logging.getLogger(__name__)


@dataclass
class CompressionStats:
    """Per-session compression counters (exposed to UIs and ``hermes-memory sessions stats``)."""

    count: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summary_tokens: int = 0
    fallbacks: int = 0
    aborted: int = 0
    last_error: str | None = None


def compression_threshold(
    settings: CompressionSettings, context_length: int, model: str | None = None
) -> int:
    """Tokens at which a transcript is compressed; see
    :meth:`CompressionSettings.trigger_tokens`."""
    return settings.trigger_tokens(context_length, model)


def _turn_messages(messages: Sequence[Any]) -> tuple[ChatMessage, ...]:
    """The turn's messages as dicts (SDK message objects via ``model_dump()``); anything
    else raises, naming the item, before any layer sees the turn."""
    if isinstance(messages, Mapping | str | bytes):
        raise HermesError(
            f"messages must be a list of this turn's message dicts, got one "
            f"{type(messages).__name__}; pass [message] (nothing of this turn was stored)"
        )
    out: list[ChatMessage] = []
    for index, message in enumerate(messages):
        if isinstance(message, Mapping):
            out.append(dict(message))
            continue
        dump = getattr(message, "model_dump", None)
        data = dump() if callable(dump) else None
        if not isinstance(data, Mapping):
            raise HermesError(
                f"message {index} of the turn is a {type(message).__name__}, not an "
                'OpenAI-style message dict ({"role": ..., "content": ...}); nothing of this '
                "turn was stored"
            )
        out.append(dict(data))
    return tuple(out)


def _count(value: Any) -> int:
    """A non-negative int from what a caller passed as a count (None, "3", 2.0 …); 0 when it
    is not a number, so a sloppy count never breaks the layers that read it."""
    try:
        return max(0, int(value))
    except (TypeError, ValueError, OverflowError):
        return 0


def _tool_names(messages: Sequence[ChatMessage]) -> tuple[str, ...]:
    names: list[str] = []
    for message in messages:
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list | tuple) else ():
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                names.append(function["name"])
    return tuple(names)


class Session:
    """One conversation. Build it with :meth:`MemoryHost.session`; close it (or use ``with``).

    The system prompt and tool list are computed when the session opens and never change.
    Methods are safe to call from one agent thread; background work is the host's.
    """

    def __init__(self, host: MemoryHost, info: SessionInfo) -> None:
        self.host = host
        self.info = info
        self.turn_number = 0
        self._turn_open = False
        self.transcript: list[ChatMessage] = []
        self.last_recall: list[MemoryContext] = []
        self.compression = CompressionStats()
        self._closed = False
        self._flush_notices: list[str] = []
        facade = host.facade
        facade.on_session_start(info)
        self._router: ToolRouter = facade.register_tools(info)
        blocks = facade.system_prompt_blocks(info, self._router.names)
        self._prompt_blocks = tuple(blocks)
        self._system_prompt = "\n\n".join(block.text.strip("\n") for block in blocks)
        facade.on_prompt_frozen(info, self._system_prompt)

    @property
    def id(self) -> str:
        return self.info.id

    # -- the frozen parts

    def system_prompt(self) -> str:
        """The system prompt, assembled once at open and byte-identical afterwards."""
        return self._system_prompt

    def prompt_blocks(self) -> tuple[PromptBlock, ...]:
        """The blocks :meth:`system_prompt` was joined from (frozen with it), each with its
        ``source`` (``"memory"``, ``"skills"``, ...): callers that serve one part of the prompt
        (the MCP server's resources) read them here instead of parsing the whole prompt."""
        return self._prompt_blocks

    def tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas of every routed tool, in routing order."""
        return self._router.schemas()

    def tool_specs(self) -> list[ToolSpec]:
        """The routed tools themselves (with ``toolset`` and ``read_only``), in routing order."""
        return self._router.specs()

    @property
    def tool_names(self) -> frozenset[str]:
        return self._router.names

    # -- per turn

    def before_turn(self, text: str) -> str:
        """Start a user turn. Returns ``""`` or one fenced ``<memory-context>`` block to append
        to the API copy of the user message (never to the stored transcript).

        Trivial prompts ("ok", "/cmd", "谢谢") skip recall. Recalled text is capped
        (``memory.recall_max_chars``) and screened by the facade: lines the threat scanner
        flags are withheld and marked before they can enter a prompt. Never raises for
        anything a provider returns.
        """
        self._check_open()
        self.turn_number += 1
        self._turn_open = True
        self.host.facade.on_turn_start(self.info, self.turn_number, text)
        if is_trivial_prompt(text):
            self.last_recall = []
            return ""
        started = time.perf_counter()
        contexts = self.host.facade.prefetch(self.info, text)  # coerced, capped, screened
        # What USER.md / MEMORY.md already put in the frozen prompt is not repeated.
        fresh = (drop_known_lines(c, self._system_prompt) for c in contexts)
        self.last_recall = [c for c in fresh if c is not None and c.text.strip()]
        block = build_memory_context_block("\n\n".join(c.text for c in self.last_recall))
        self._trace(text, block, time.perf_counter() - started)
        return block

    def _trace(self, query: str, block: str, seconds: float) -> None:
        """Record this turn's recall in the user's trace (``memory.recall_trace``)."""
        memory = self.host.settings.memory
        if not memory.recall_trace:
            return
        turn = TraceTurn(
            session_id=self.info.id,
            turn=self.turn_number,
            query=query,
            at=time.time(),
            tokens=estimate_tokens(block) if block else 0,
            latency_ms=round(seconds * 1000.0, 3),
            sources=tuple(
                TraceSource(c.source, c.label, c.count, c.text, c.scores) for c in self.last_recall
            ),
        )
        record_trace(self.host.home, self.info.user_id, turn, keep=memory.recall_trace_turns)

    def recall_line(self) -> str:
        """ "🧠 chroma — recalled 3 memories" for the last turn, or ``""``."""
        parts = [
            f"{c.glyph} {c.label} — recalled {c.count} memor{'y' if c.count == 1 else 'ies'}"
            for c in self.last_recall
            if c.label and c.count
        ]
        return " · ".join(parts)

    def call_tool(
        self, name: str, args: Mapping[str, Any] | str, *, origin: WriteOrigin = "foreground"
    ) -> str:
        """Run a routed tool. Always returns a JSON string; failures are JSON errors."""
        self._check_open()
        ctx = ToolContext(
            session=self.info, origin=origin, notify_memory_write=self.notify_memory_write
        )
        return self.host.facade.call_tool(self._router, name, args, ctx)

    def notify_memory_write(self, write: MemoryWrite) -> None:
        """Tell the provider about a committed built-in memory write of this session (the
        memory tool calls it through ``ToolContext``; ``/memory approve`` passes it to
        :func:`~hermes_core.layers.memory.approval.approve_pending`). See
        :meth:`MemoryHost.notify_memory_write`."""
        self._check_open()
        self.host.notify_memory_write(write, session=self.info)

    def after_turn(
        self,
        user_text: str,
        reply: str,
        messages: Sequence[ChatMessage] | None = None,
        *,
        completed: bool = True,
        tool_iterations: int = 0,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
    ) -> Turn:
        """Finish a turn: built-in layers persist it before this returns, the provider syncs
        in the background (in order), then ``on_turn_end`` runs (nudges, review).

        ``messages`` are the messages of *this turn* (user message first); when omitted,
        ``[user, assistant]`` is used. A call without a :meth:`before_turn` since the last
        one is a new turn (its own number). Raises when the session archive could not store
        the turn (the message says why); the provider's failures never raise here.
        """
        self._check_open()
        if not self._turn_open:
            self.turn_number += 1
        self._turn_open = False
        if messages is None:
            messages = [
                {"role": "user", "content": user_text},
                {"role": "assistant", "content": reply},
            ]
        turn_messages = _turn_messages(messages)
        turn = Turn(
            session_id=self.info.id,
            number=self.turn_number,
            user_text=user_text,
            reply=reply,
            messages=turn_messages,
            completed=completed,
            tool_names=_tool_names(turn_messages),
            tool_iterations=_count(tool_iterations),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            ended_at=time.time(),
        )
        self.transcript.extend(turn.messages)
        self.host.facade.sync(self.info, turn)
        self.host.facade.on_turn_end(self.info, turn)
        return turn

    # -- compression

    def compression_threshold(self, context_length: int | None = None) -> int:
        """Tokens at which :meth:`maybe_compress` compresses."""
        settings = self.host.settings
        window = context_length or settings.llm.context_length
        return compression_threshold(settings.compression, window, self.info.model)

    def maybe_compress(
        self,
        messages: Sequence[ChatMessage],
        *,
        prompt_tokens: int | None = None,
        context_length: int | None = None,
        force: bool = False,
        focus: str | None = None,
    ) -> list[ChatMessage]:
        """Compress ``messages`` when they reach the threshold (or when ``force``).

        ``prompt_tokens`` is the usage the API last reported; without it the estimate is
        used. Returns the messages to send from now on — the input unchanged when nothing
        was done or the compressor kept the transcript on purpose.
        """
        self._check_open()
        messages = _turn_messages(messages)  # a non-list or a non-dict item names the fix
        _check_count(prompt_tokens, "prompt_tokens", "maybe_compress")
        _check_count(context_length, "context_length", "maybe_compress", minimum=1)
        settings = self.host.settings
        window = context_length or settings.llm.context_length
        threshold = self.compression_threshold(window)
        tokens = prompt_tokens if prompt_tokens is not None else estimate_messages_tokens(messages)
        if not force and not settings.compression.should_compress(tokens, window, self.info.model):
            return list(messages)
        self.flush_memories(messages, trigger="compression")
        notes = self.host.facade.on_pre_compress(self.info, messages)
        budget = CompressionBudget(
            context_length=window,
            threshold_tokens=threshold,
            prompt_tokens=tokens,
            focus=focus,
            manual=force,
        )
        result = self.host.facade.compress(self.info, messages, budget, notes)
        return self._apply_compression(messages, result)

    def _apply_compression(
        self, messages: Sequence[ChatMessage], result: CompressionResult | None
    ) -> list[ChatMessage]:
        stats = self.compression
        if result is None:
            stats.last_error = "no compressor is registered"
            return list(messages)
        if result.aborted:
            stats.aborted += 1
            stats.last_error = redact(result.error) if result.error else result.error
            return list(messages)
        stats.count += 1
        stats.tokens_before += result.tokens_before
        stats.tokens_after += result.tokens_after
        stats.summary_tokens += result.summary_tokens
        stats.fallbacks += int(result.fallback_used)
        stats.last_error = redact(result.error) if result.error else result.error
        self.host.facade.on_compressed(self.info, result)
        return [dict(m) for m in result.messages]

    # -- before context is lost

    def flush_memories(
        self, messages: Sequence[ChatMessage] | None = None, *, trigger: str = "manual"
    ) -> list[str]:
        """Give the layers one bounded chance to save what ``messages`` (default: the
        transcript) taught before they leave the context (``on_context_loss``). Called by
        :meth:`maybe_compress` and :meth:`close`; the review layer flushes when
        ``memory.flush_min_turns`` user turns passed since its last review or flush, within
        ``review.flush_timeout``. Returns the lines describing what was saved (also kept for
        :meth:`drain_flush_notices`). Never raises."""
        if self._closed:
            return []
        transcript = list(messages) if messages is not None else list(self.transcript)
        try:
            lines = self.host.facade.on_context_loss(self.info, transcript, trigger)
        except Exception:  # a flush must never block an exit or a compression
            log.exception("memory flush before %s failed", trigger)
            return []
        self._flush_notices.extend(lines)
        return lines

    def drain_flush_notices(self) -> list[str]:
        """Lines of flushes since the last call ("💾 Memory ➕ … (saved before /new)")."""
        lines, self._flush_notices = self._flush_notices, []
        return lines

    # -- end

    def close(self, messages: Sequence[ChatMessage] | None = None, *, reason: str = "exit") -> None:
        """End the session: a bounded memory flush (:meth:`flush_memories`), then
        ``on_session_end`` (the provider's queued after its syncs), then wait for queued
        provider work. Idempotent."""
        if self._closed:
            return
        transcript = list(messages) if messages is not None else list(self.transcript)
        self.flush_memories(transcript, trigger=reason)
        self._closed = True
        self.host.facade.on_session_end(self.info, transcript, reason)
        if not self.host.facade.flush(self.host.flush_timeout):
            log.warning("provider work for session %s still running after close", self.info.id)
        self.host._forget(self)

    def _check_open(self) -> None:
        if self._closed:
            raise HermesError(
                f"session {self.info.id} is closed; open a new one with host.session()"
            )

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(reason="error" if exc_type is not None else "exit")


class MemoryHost:
    """Settings, plugin manager, facade and the active provider for one Hermes home."""

    flush_timeout: float = 5.0
    """Seconds a closing session waits for queued provider work (``memory.shutdown_timeout``)."""
    shutdown_notes: list[str] = []  # noqa: RUF012 (replaced, never mutated)
    """What the provider did not finish when the host closed (see :meth:`close`)."""

    def __init__(
        self,
        home: Path,
        settings: HermesSettings,
        pm: pluggy.PluginManager,
        *,
        activate_provider: bool = True,
    ) -> None:
        self.home = home
        self.settings = settings
        self.flush_timeout = settings.memory.shutdown_timeout
        self.pm = pm
        self.facade = HookFacade(pm, settings, home)
        self.facade.configure()
        self.registry = ProviderRegistry(pm, settings, home, register=self.facade.register)
        self._sessions: set[Session] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.provider_status: ProviderStatus | None = (
            self.registry.activate_configured() if activate_provider else None
        )
        if self.provider_status is not None and self.provider_status.active:
            self.facade.warm_up()  # open its store / load its model while the caller sets up

    @classmethod
    def open(
        cls,
        home: Path | str | None = None,
        *,
        settings: HermesSettings | None = None,
        load_entrypoints: bool = True,
        activate_provider: bool = True,
        pm: pluggy.PluginManager | None = None,
    ) -> MemoryHost:
        """Open the host for ``home`` (default ``$HERMES_HOME`` or ``~/.hermes``).

        Reads settings (unless given), builds the plugin manager with the built-in layers and
        activates ``memory.provider``. A provider that is not installed, fails to load or is
        unavailable is reported in :attr:`provider_status` and the host runs built-in only:
        memory keeps working. Raises ConfigError for invalid settings.
        """
        resolved = ensure_private_dir(resolve_home(home))
        loaded = settings if settings is not None else load_settings(resolved)
        manager = pm if pm is not None else create_plugin_manager(load_entrypoints=load_entrypoints)
        return cls(resolved, loaded, manager, activate_provider=activate_provider)

    @property
    def provider(self) -> MemoryProvider | None:
        """The active external provider, if any."""
        return self.registry.active

    def session(
        self,
        *,
        source: str = "cli",
        user_id: str | None = None,
        session_id: str | None = None,
        parent_id: str | None = None,
        model: str | None = None,
        title: str | None = None,
    ) -> Session:
        """Open a session. Its system prompt and tools are fixed from here on."""
        if self._closed:
            raise HermesError("this MemoryHost is closed; open a new one with MemoryHost.open()")
        _check_session_ids(session_id=session_id, parent_id=parent_id)
        check_user_id(user_id)
        info = SessionInfo(
            id=session_id or new_session_id(),
            home=self.home,
            settings=self.settings,
            source=source,
            user_id=user_id,
            parent_id=parent_id,
            model=model,
            title=title,
        )
        session = Session(self, info)
        with self._lock:
            self._sessions.add(session)
        return session

    def notify_memory_write(
        self,
        write: MemoryWrite,
        *,
        session: SessionInfo | None = None,
        user_id: str | None = None,
        source: str = "cli",
    ) -> None:
        """THE route of a committed built-in memory write to the provider's
        ``on_memory_write`` (egress-redacted, on the provider worker, in order).

        Tool calls come through :meth:`Session.notify_memory_write` (``session`` given); writes
        committed outside a session (``hermes-memory memory approve``/``restore``) describe their
        scope with ``user_id`` and ``source``. ``write.session_id`` is kept when set (the
        session that proposed the write), else the session's id (or a new one)."""
        info = session or SessionInfo(
            id=write.session_id or new_session_id(),
            home=self.home,
            settings=self.settings,
            source=source,
            user_id=user_id,
        )
        self.facade.on_memory_write(info, replace(write, session_id=write.session_id or info.id))

    def _forget(self, session: Session) -> None:
        with self._lock:
            self._sessions.discard(session)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for queued provider work (tests use this)."""
        return self.facade.flush(timeout)

    def close(self, timeout: float | None = None) -> ShutdownReport:
        """Close open sessions, drain provider work (≤ ``timeout``, default
        ``memory.shutdown_timeout``), shut providers down. The report's ``notes`` (also kept
        in :attr:`shutdown_notes`) say in one line per provider what did not finish."""
        if self._closed:
            return ShutdownReport(completed=True)
        for session in list(self._sessions):
            session.close()
        self._closed = True
        report = self.facade.shutdown(self.flush_timeout if timeout is None else timeout)
        self.shutdown_notes = list(report.notes)
        return report

    def __enter__(self) -> MemoryHost:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _check_count(value: object, name: str, where: str, *, minimum: int = 0) -> None:
    """Refuse a count that is not an int >= ``minimum`` (bools too), naming the fix."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise HermesError(f"{where}: {name} must be a whole number >= {minimum}, got {value!r}")


def _check_session_ids(**ids: object) -> None:
    """Session ids are keys in every store: printable text of at most 256 characters."""
    for name, value in ids.items():
        if value is None or value == "":
            continue  # no id: a fresh one / no parent
        if (
            not isinstance(value, str)
            or not value.strip()
            or len(value) > 256
            or any(ch < " " or "\ud800" <= ch <= "\udfff" or ch == "\x7f" for ch in value)
        ):
            shown = repr(value)[:80]
            raise HermesError(
                f"{name} {shown} is not usable: give printable text of at most 256 characters "
                "(or omit session_id to get a fresh one)"
            )


def new_session_id() -> str:
    """Sortable, unique: ``20261129T111552-1a2b3c4d``."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]


__all__ = [
    "CompressionStats",
    "MemoryHost",
    "ProviderStatus",
    "Session",
    "compression_threshold",
    "new_session_id",
]
