"""Values handed to and returned from hooks.

Everything here is a frozen dataclass (or a type alias) so a hook implementation can keep a
reference without worrying that the host mutates it later. Chat transcripts are plain
OpenAI-style message dicts (:data:`ChatMessage`): every agent framework already speaks that
shape, and the compressor, the session archive and the providers all need to read and write it
without a conversion layer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings

ChatMessage = dict[str, Any]
"""One OpenAI-style chat message: ``{"role": ..., "content": ..., "tool_calls"?, ...}``.

Keys starting with ``_`` are host-internal markers (for example ``_compressed_summary``) and
are stripped before anything goes on the wire.
"""

WriteOrigin = Literal["foreground", "background_review", "attended_review"]
"""Who caused a tool call: the live agent, an unattended background review, or ``/refine``."""

MemoryAction = Literal["add", "replace", "remove"]
MemoryTarget = Literal["memory", "user"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """Identity of one conversation, passed as ``session`` to every per-session hook.

    ``settings`` and ``home`` are the host's; hook implementations keep per-session state
    keyed by ``id``. ``parent_id`` links a session to the one it continues (``/new`` keeps the
    lineage, compression that rotates ids too).
    """

    id: str
    home: Path
    settings: HermesSettings
    source: str = "cli"
    user_id: str | None = None
    parent_id: str | None = None
    model: str | None = None
    title: str | None = None
    started_at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class Turn:
    """One completed user turn.

    ``messages`` are the OpenAI-style messages produced *in this turn*, in order: the user
    message, any assistant tool-call messages and tool results, and the final assistant reply.
    ``completed`` is False when the turn was interrupted or produced no final reply.
    ``tool_names`` lists every tool the model called during the turn (in call order).
    """

    session_id: str
    number: int
    user_text: str
    reply: str
    messages: tuple[ChatMessage, ...] = ()
    completed: bool = True
    tool_names: tuple[str, ...] = ()
    tool_iterations: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    started_at: float = field(default_factory=time.time)
    ended_at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """Recalled context from a ``prefetch`` implementation.

    ``text`` is plain, *unfenced* text (the host adds the one ``<memory-context>`` fence).
    ``count`` is how many memories were recalled (drives "🧠 label — recalled N memories");
    ``label`` names the source shown in that line. ``scores`` are the recalled memories'
    relevance scores when the implementation reports them, optional: ``scores[i]`` belongs
    to the i-th memory in ``text`` (written as one ``- `` line each, the recall trace pairs
    them); leave it empty unless every memory has one (the trace then shows the block);
    ``source`` is the plugin that recalled it (set by the host, not by implementations).
    """

    text: str
    count: int = 0
    label: str = ""
    glyph: str = "🧠"
    scores: tuple[float, ...] = ()
    source: str = ""


@dataclass(frozen=True, slots=True)
class PromptBlock:
    """A block of the frozen system prompt. Blocks are sorted by ``order`` then joined.

    Orders used by the built-in layers (see :class:`PromptOrder`) leave gaps so third parties
    can slot in between.
    """

    text: str
    order: int = 50
    source: str = ""


class PromptOrder:
    """Conventional ``PromptBlock.order`` values, in the spec's system-prompt order."""

    IDENTITY = 0
    TOOL_GUIDANCE = 10
    PROVIDER = 20
    MEMORY = 30
    USER = 40
    SKILLS = 50
    CONTEXT_FILES = 60
    TIMESTAMP = 90


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool handler learns about the call besides its arguments.

    ``notify_memory_write`` is how a built-in layer reports a *committed* memory write; the
    host fans it out to ``on_memory_write`` (egress-redacted) without the layer importing
    the facade.
    """

    session: SessionInfo
    origin: WriteOrigin = "foreground"
    notify_memory_write: Callable[[MemoryWrite], None] = field(default=lambda _w: None)


ToolHandler = Callable[[Mapping[str, Any], ToolContext], str]
"""A tool implementation: takes parsed JSON arguments, returns a JSON string. Never raises
for bad input: it returns ``{"success": false, "error": ...}`` instead (the host still
catches and reports anything that escapes)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A model-facing tool contributed by ``register_tools``.

    ``parameters`` is a JSON schema object without top-level ``oneOf``/``anyOf``/``allOf``
    (some backends reject combinators). ``read_only`` tools are offered to the unattended
    background review.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: ToolHandler
    toolset: str = ""
    read_only: bool = False

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True, slots=True)
class MemoryWrite:
    """A committed write to the built-in memory, mirrored to the provider.

    ``previous_content`` is the full entry that was overwritten or removed, taken from the
    committed result, never guessed; ``None`` for adds.
    """

    action: MemoryAction
    target: MemoryTarget
    content: str
    previous_content: str | None = None
    old_text: str | None = None
    origin: WriteOrigin = "foreground"
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class CompressionBudget:
    """Inputs of one compression: the model window, the trigger and the optional focus."""

    context_length: int
    threshold_tokens: int
    prompt_tokens: int
    focus: str | None = None
    manual: bool = False


@dataclass(frozen=True, slots=True)
class CompressionResult:
    """The outcome of a ``compress`` implementation.

    ``messages`` is the new transcript, valid for the OpenAI API. ``summary`` is the handoff
    text inserted (empty when nothing was summarised). ``fallback_used`` is True when the
    deterministic extractive summary replaced the LLM one; ``aborted`` is True when the
    transcript was kept unchanged on purpose (``error`` says why).
    """

    messages: tuple[ChatMessage, ...]
    summary: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    summary_tokens: int = 0
    fallback_used: bool = False
    aborted: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """One line of ``hermes-memory doctor``: ``fix`` says what to run or change when ``ok`` is
    False."""

    name: str
    ok: bool
    detail: str = ""
    fix: str = ""


def tool_schemas(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI schemas for ``specs``, in order."""
    return [spec.schema() for spec in specs]


__all__ = [
    "ChatMessage",
    "CompressionBudget",
    "CompressionResult",
    "HealthCheck",
    "MemoryAction",
    "MemoryContext",
    "MemoryTarget",
    "MemoryWrite",
    "PromptBlock",
    "PromptOrder",
    "SessionInfo",
    "ToolContext",
    "ToolHandler",
    "ToolSpec",
    "Turn",
    "WriteOrigin",
    "tool_schemas",
]
