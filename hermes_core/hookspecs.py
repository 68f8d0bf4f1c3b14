"""The lifecycle on one screen: every hook hermes-core calls, with its contract.

Implementations decorate methods or functions with ``@hermes_core.hookimpl`` and may accept
any subset of a spec's arguments (pluggy passes only the names they ask for), so hooks evolve
by adding arguments. The host never calls ``pm.hook.*`` directly: :mod:`hermes_core.hooks`
calls implementations one by one, so **a failing implementation is logged with its plugin
name and skipped; it never fails a turn**.

Order of a session (:data:`LIFECYCLE`; the specs below are defined in this order)::

    MemoryHost.open   configure
    host.session()    on_session_start ─▶ register_tools ─▶ system_prompt_block
                        ─▶ on_prompt_frozen                      (once, frozen)
    each turn         on_turn_start ─▶ prefetch ─▶ (model + tools: on_memory_write per
                        committed memory write) ─▶ sync ─▶ on_turn_end
    maybe_compress    on_context_loss (bounded memory flush) ─▶ on_pre_compress ─▶ compress
                        ─▶ on_compressed                       (when too long)
    session.close()   on_context_loss (bounded memory flush) ─▶ on_session_end

    the CLI, outside sessions: register_commands (building `hermes`), health_check
    (`hermes-memory doctor`, `hermes-memory memory status`)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core.markers import hookspec
from hermes_core.types import (
    ChatMessage,
    CompressionBudget,
    CompressionResult,
    HealthCheck,
    MemoryContext,
    MemoryWrite,
    PromptBlock,
    SessionInfo,
    ToolSpec,
    Turn,
)

if TYPE_CHECKING:
    import click

    from hermes_core.settings.models import HermesSettings

LIFECYCLE: tuple[str, ...] = (
    "configure",
    "on_session_start",
    "register_tools",
    "system_prompt_block",
    "on_prompt_frozen",
    "on_turn_start",
    "prefetch",
    "on_memory_write",
    "sync",
    "on_turn_end",
    "on_context_loss",
    "on_pre_compress",
    "compress",
    "on_compressed",
    "on_session_end",
)
"""The hooks of one session in the order the host calls them (``on_memory_write`` once per
committed memory write during the model's tool calls; ``on_context_loss`` before a
compression and again before ``on_session_end``; the compression three only when the
transcript is compressed). ``register_commands`` and ``health_check`` are called by the CLI,
outside sessions. ``tests/test_lifecycle.py`` checks this against a real session."""


# ── host start ──


@hookspec(historic=True)
def configure(settings: HermesSettings, home: Path) -> None:
    """Called once when the host starts, and for plugins registered later (historic).

    Keep it cheap: read settings, remember paths. Do not open network connections; create
    files lazily. Returns nothing.
    """


# ── session open (once, frozen) ──


@hookspec
def on_session_start(session: SessionInfo) -> None:
    """A session opened. Called before the system prompt is built. Returns nothing."""


@hookspec
def register_tools(session: SessionInfo) -> list[ToolSpec] | None:
    """Contribute model-facing tools for this session.

    Called once per session. Tools are routed by name: the first implementation to offer a
    name wins, later duplicates and reserved core names are refused with a warning.
    """


@hookspec
def system_prompt_block(session: SessionInfo, tool_names: frozenset[str]) -> PromptBlock | None:
    """Contribute a block of the session's system prompt.

    Called once per session, after ``register_tools`` (``tool_names`` are the routed tools,
    so a block can depend on what the model can call). The host sorts blocks by
    ``PromptBlock.order`` and freezes the result, so the prompt stays byte-identical for the
    whole session (prefix caching). Return ``None`` to contribute nothing. Must not block on
    network I/O.
    """


@hookspec
def on_prompt_frozen(session: SessionInfo, system_prompt: str) -> None:
    """The session's system prompt was assembled and frozen (the session archive stores the
    snapshot). Called once per session, right after ``system_prompt_block``."""


# ── each turn ──


@hookspec
def on_turn_start(session: SessionInfo, turn_number: int, message: str) -> None:
    """A user turn begins (``turn_number`` counts from 1). Cheap bookkeeping only."""


@hookspec
def prefetch(session: SessionInfo, query: str) -> MemoryContext | None:
    """Recall context relevant to ``query`` before the model is called.

    Return plain, unfenced text in a :class:`MemoryContext`, or ``None``. Results of every
    implementation are joined and fenced once in a ``<memory-context>`` block appended to the
    API copy of the user message. Must be fast: return cached background work. The active
    external provider's call is bounded by ``memory.prefetch_timeout`` and skipped while a
    previous call is still stuck. Not called for trivial prompts ("ok", "/cmd", ...).
    """


@hookspec
def on_memory_write(session: SessionInfo, write: MemoryWrite) -> None:
    """A built-in memory write was committed (never for staged or failed writes).

    Called once per operation, egress-redacted. The provider mirrors it into its backend.
    """


@hookspec
def sync(session: SessionInfo, turn: Turn) -> None:
    """Persist a completed turn.

    Built-in layers run inline and must be durable on return. The external provider runs on
    one background worker that keeps turn order; it must be idempotent (a turn may be resent
    after a crash) and must not block for long. Failures are isolated, except for a plugin
    class with ``durable_sync = True`` (the session archive): its failure is raised to the
    caller of ``after_turn`` once every other implementation ran.
    """


@hookspec
def on_turn_end(session: SessionInfo, turn: Turn) -> None:
    """After ``sync``. Cheap: update counters, queue the next prefetch, start a background
    review on its own thread. Must return promptly; the user is waiting for the next prompt.
    """


# ── before context is lost (compression, session end) ──


@hookspec
def on_context_loss(
    session: SessionInfo, messages: Sequence[ChatMessage], trigger: str
) -> list[str] | None:
    """Turns are about to leave the context: before a compression (``trigger`` is
    ``compression``) and before the session ends (``new_session``, ``reset``, ``exit``,
    ``error``). One bounded chance to save what they taught (the review layer runs a memory
    flush when enough turns passed since the last review or flush).

    Return lines for the user ("💾 Memory ➕ …") or ``None``. Must return promptly: the
    user is waiting to leave; built-ins bound themselves by ``review.flush_timeout``, the
    provider's call is bounded by it too. A failure never blocks the exit or the compression.
    """


# ── compression (when the context is too long) ──


@hookspec
def on_pre_compress(session: SessionInfo, messages: Sequence[ChatMessage]) -> str | None:
    """The messages about to be summarised away. Return text worth keeping (insights,
    extracted facts) or ``None``; it is given to the summariser as source material, not as
    instructions. Runs before ``compress``.
    """


@hookspec(firstresult=True)
def compress(
    session: SessionInfo,
    messages: Sequence[ChatMessage],
    budget: CompressionBudget,
    notes: str,
) -> CompressionResult | None:
    """Shrink a transcript that no longer fits. The first non-``None`` result wins.

    ``notes`` joins the ``on_pre_compress`` texts. The built-in handoff compressor is
    ``trylast``, so a plugin can replace it. The result must be valid for the OpenAI API
    (tool results follow their calls) and keep the system message and newest user message.
    """


@hookspec
def on_compressed(session: SessionInfo, result: CompressionResult) -> None:
    """A compression was applied: ``result.messages`` is the live transcript from now on.

    Messages of this session that are no longer in it were summarised away; the session
    archive marks them compacted (still searchable, even from this session). Not called when
    the compressor kept the transcript (``result.aborted``).
    """


# ── session end ──


@hookspec
def on_session_end(session: SessionInfo, messages: Sequence[ChatMessage], reason: str) -> None:
    """A real session boundary: exit, ``/new``, ``/reset``. Not called per turn.

    ``messages`` is the session's transcript; ``reason`` is why it ended (``exit``,
    ``new_session``, ``reset``, ``compression``...). End-of-session extraction goes here; the
    host flushes the provider worker afterwards.
    """


# ── the CLI (outside sessions) ──


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add click commands to the ``hermes`` CLI (``cli`` is the root ``click.Group``).

    The active provider may add ``hermes <provider> ...``; inactive providers are never
    imported, so their commands do not appear.
    """


@hookspec
def health_check(home: Path) -> list[HealthCheck] | None:
    """Report on yourself for ``hermes-memory doctor`` and ``hermes-memory memory status``.

    Every failed :class:`HealthCheck` carries a ``fix``. No network except the active
    provider's own reachability probe, bounded to a few seconds.
    """
