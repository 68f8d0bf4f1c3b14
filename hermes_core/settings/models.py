"""The settings tree. Every field has a description: ``hermes-memory memory setup`` prompts and
docs/configuration.md are generated from it (a test keeps the doc in step).

YAML paths map to env vars: ``memory.provider`` ↔ ``HERMES_MEMORY__PROVIDER``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from hermes_core.settings.base import HermesBaseSettings

USABLE_WINDOW_SHARE = 0.85
"""Share of the window a compression trigger may reach at most."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_default=True)


class MemorySettings(_Section):
    """Built-in MEMORY.md / USER.md and the choice of external provider."""

    memory_enabled: bool = Field(True, description="Inject MEMORY.md (the agent's notes).")
    user_profile_enabled: bool = Field(True, description="Inject USER.md (the user profile).")
    memory_char_limit: int = Field(
        2200, ge=0, description="Budget of MEMORY.md in characters (delimiters count)."
    )
    user_char_limit: int = Field(
        1375, ge=0, description="Budget of USER.md in characters (delimiters count)."
    )
    shared_agent_memory: bool = Field(
        False,
        description="Share the agent's MEMORY.md across all user_ids (single-team setups); "
        "USER.md stays per user. Off: each user_id has its own MEMORY.md and USER.md.",
    )
    store: Literal["files", "postgresql"] = Field(
        "files",
        description="Where MEMORY.md / USER.md live: 'files' under $HERMES_HOME/memories "
        "(one host); 'postgresql' in the database at memory.url, shared by every host (same "
        "limits, entries, scanner and approval; `hermes-memory memory export` writes the files "
        "back).",
    )
    url: SecretStr | None = Field(
        None,
        description="PostgreSQL URL of memory.store: postgresql (postgresql://user:password@"
        "host/db), kept in $HERMES_HOME/.env as HERMES_MEMORY__URL; unset = sessions.url.",
    )
    pg_timeout: float = Field(
        10.0,
        gt=0,
        description="Seconds memory.store: postgresql waits for a connection or one statement "
        "before the memory write is refused (nothing is changed) with the error.",
    )
    nudge_interval: int = Field(
        10, ge=0, description="User turns between background memory reviews (0 disables)."
    )
    flush_min_turns: int = Field(
        6,
        ge=0,
        description="Before compression, /new, /reset, exit or Session.close: flush memory "
        "(one bounded review of the turns about to be lost) once this many user turns "
        "passed since the last review or flush (0 disables).",
    )
    write_approval: bool = Field(
        False, description="Stage memory writes for approval (`hermes-memory memory pending`)."
    )
    overflow: Literal["error", "archive"] = Field(
        "error",
        description="What an add over budget does: 'error' refuses it; 'archive' moves the "
        "oldest or low-priority entries to the archive table in state.db (restorable).",
    )
    provider: str = Field(
        "", description="The one active external memory provider; empty = built-in only."
    )
    prefetch_timeout: float = Field(
        8.0,
        gt=0,
        description="Seconds to wait for the external provider's prefetch, screening of its "
        "recall included.",
    )
    provider_timeout: float = Field(
        10.0,
        gt=0,
        description="Seconds to wait for any other inline provider call (tools, system prompt "
        "block, turn start/end, shutdown) before it is skipped with a warning.",
    )
    shutdown_timeout: float = Field(
        5.0,
        gt=0,
        description="Seconds a closing session (and the process, on exit) waits for the "
        "external provider's queued work (saving the last turns, session end) before it "
        "stops waiting and says what was not done.",
    )
    recall_max_chars: int = Field(
        12_000,
        ge=0,
        description="Characters of one recall kept (before scanning); 0 = no cap.",
    )
    recall_max_tokens: int = Field(
        1500,
        ge=50,
        description="Estimated tokens of one provider's recall: its best hits packed as "
        "query-focused excerpts, each with its date, a fair share of this budget per hit.",
    )
    recall_trace: bool = Field(
        True,
        description="Record what each turn's recall put in front of the model (per user, "
        "shown by `hermes-memory ui`); false records nothing.",
    )
    recall_trace_turns: int = Field(
        20, ge=1, le=1000, description="Turns of recall trace kept per user (oldest go first)."
    )
    providers: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per-provider settings blocks, validated by the provider at activation.",
    )


class SessionsSettings(_Section):
    """The session archive (state.db or a PostgreSQL server) and session_search."""

    enabled: bool = Field(True, description="Record every session in the archive.")
    backend: Literal["sqlite", "postgresql"] = Field(
        "sqlite",
        description="Where the archive lives: sqlite ($HERMES_HOME/state.db) or postgresql "
        "(the server at sessions.url, shared by many hosts).",
    )
    url: SecretStr | None = Field(
        None,
        description="PostgreSQL URL of the archive (backend postgresql), e.g. "
        "postgresql://user:password@host:5432/hermes; a secret: keep it in .env as "
        "HERMES_SESSIONS__URL.",
    )
    statement_timeout_s: float = Field(
        30.0, gt=0, le=3600, description="PostgreSQL statement timeout of archive queries."
    )
    pool_size: int = Field(
        8, ge=1, le=256, description="PostgreSQL connections one process may open."
    )
    hidden_sources: list[str] = Field(
        default_factory=lambda: ["kanban", "subagent", "tool"],
        description="Session sources that session_search never returns.",
    )
    index_char_cap: int = Field(
        8192, ge=256, description="Characters of one message indexed for full-text search."
    )
    default_limit: int = Field(3, ge=1, le=10, description="Sessions returned per search.")
    redact_secrets: bool = Field(
        True,
        description="Mask credentials (API keys, tokens, passwords) in message text before it "
        "is stored in state.db; false keeps text verbatim.",
    )


class SkillsSettings(_Section):
    """Skills (SKILL.md) as procedural memory."""

    enabled: bool = Field(True, description="Offer skills and render the skills index.")
    external_dirs: list[str] = Field(
        default_factory=list, description="Extra read-only skill roots (local names win)."
    )
    disabled: list[str] = Field(
        default_factory=list,
        description="Skill names hidden from the index and tools ('linux:name': one platform).",
    )
    write_approval: bool = Field(
        False, description="Stage skill writes for approval (`hermes-memory skills pending`)."
    )
    creation_nudge_interval: int = Field(
        10, ge=0, description="Tool-calling iterations between skill reviews (0 disables)."
    )
    platform: str | None = Field(
        None, description="Platform for skill filtering (linux/macos/windows); auto if unset."
    )
    available_tools: list[str] | None = Field(
        None,
        description=(
            "Tool names the agent offers, for requires_tools/fallback_for_tools filtering of "
            "the skills index; unset = the memory and skill tools only."
        ),
    )
    available_toolsets: list[str] | None = Field(
        None,
        description=(
            "Toolset names the agent offers, for requires_toolsets/fallback_for_toolsets "
            "filtering; unset = memory, session_search and skills."
        ),
    )
    semantic_matching: bool = Field(
        True,
        description=(
            "Fuse an embedding ranking into skills_find when the offline embedder is "
            "installed (pip install 'hermes-memory-core[embed]'); false = lexical only."
        ),
    )
    history_versions: int = Field(
        10,
        ge=0,
        le=1000,
        description=(
            "Previous versions kept per skill by patch/edit/delete "
            "(`hermes-memory skills history`, `hermes-memory skills revert`); 0 keeps none."
        ),
    )


class CompressionSettings(_Section):
    """Context compression into a handoff sheet."""

    enabled: bool = Field(True, description="Compress automatically when over threshold.")
    threshold: float = Field(
        0.50, gt=0, le=1, description="Fraction of the context window that triggers it."
    )
    threshold_tokens: int | None = Field(
        None, ge=1, description="Absolute trigger cap in tokens (min with the ratio)."
    )
    model_thresholds: dict[str, float] = Field(
        default_factory=dict,
        description="Per-model threshold overrides; key is a model-name substring, "
        "longest match wins.",
    )
    target_ratio: float = Field(
        0.20, ge=0.10, le=0.80, description="Tail token budget as a share of the threshold."
    )
    protect_first_n: int = Field(3, ge=1, description="Head messages always kept.")
    protect_last_n: int = Field(20, ge=1, description="Minimum tail messages kept.")
    min_tail_user_messages: int = Field(
        1, ge=1, description="Real user messages guaranteed in the tail."
    )
    abort_on_summary_failure: bool = Field(
        False, description="Keep the transcript unchanged when the summary fails."
    )
    max_attempts: int = Field(3, ge=1, le=10, description="Summary attempts per compaction.")

    def trigger_tokens(self, context_length: int, model: str | None = None) -> int:
        """Tokens at which a transcript of a ``context_length`` window is compressed.

        ``threshold`` × window, where ``model_thresholds`` overrides the ratio for models whose
        name contains the key (case-insensitive, longest key wins), capped by
        ``threshold_tokens`` when set. A trigger at or above the whole window moves to 85 % of
        it, so there is always room left to compress in.
        """
        ratio = self.threshold
        if model and self.model_thresholds:
            matches = [key for key in self.model_thresholds if key and key.lower() in model.lower()]
            if matches:
                ratio = self.model_thresholds[max(matches, key=len)]
        trigger = int(context_length * ratio)
        if self.threshold_tokens is not None:
            trigger = min(trigger, self.threshold_tokens)
        if trigger >= context_length:
            trigger = int(context_length * USABLE_WINDOW_SHARE)
        return max(trigger, 1)

    def should_compress(
        self, prompt_tokens: int, context_length: int, model: str | None = None
    ) -> bool:
        """True when automatic compaction is enabled and ``prompt_tokens`` reached
        :meth:`trigger_tokens` (exact equality triggers)."""
        return self.enabled and prompt_tokens >= self.trigger_tokens(context_length, model)


class ReviewSettings(_Section):
    """Background review after turns."""

    enabled: bool = Field(True, description="Run automatic background reviews.")
    max_iterations: int = Field(16, ge=1, description="Tool-loop iterations of one review.")
    notifications: Literal["off", "on", "verbose"] = Field(
        "on", description="Show '💾 Memory updated' lines after reviews."
    )
    max_input_tokens: int = Field(
        120_000, ge=1000, description="Cap on transcript tokens replayed into a review."
    )
    flush_timeout: float = Field(
        20.0,
        gt=0,
        description="Seconds a memory flush before context loss may take; past it the flush "
        "is abandoned (writes already made stay) and the exit or compression goes on.",
    )


class LLMRoute(_Section):
    """An OpenAI-compatible endpoint. Unset fields fall back to the main ``llm`` route."""

    base_url: str | None = Field(
        None, description="OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1."
    )
    api_key: SecretStr | None = Field(None, description="API key for the endpoint.")
    model: str | None = Field(None, description="Model name.")


class AuxiliarySettings(_Section):
    """Per-task routes; each defaults to the main model."""

    compression: LLMRoute = Field(
        default_factory=LLMRoute, description="Route for compression summaries."
    )
    session_search: LLMRoute = Field(
        default_factory=LLMRoute, description="Route for session_search summaries."
    )
    review: LLMRoute = Field(default_factory=LLMRoute, description="Route for background review.")


class LLMSettings(LLMRoute):
    """The main model. Without a base_url everything uses deterministic fallbacks."""

    timeout: float = Field(60.0, gt=0, description="Seconds per request.")
    max_retries: int = Field(3, ge=0, le=10, description="Retries on 429/5xx/timeouts.")
    context_length: int = Field(
        128_000, ge=1024, description="Context window of the main model in tokens."
    )
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature.")
    auxiliary: AuxiliarySettings = Field(
        default_factory=AuxiliarySettings, description="Routes for auxiliary tasks."
    )


class AgentSettings(_Section):
    """The reference agent loop (`hermes-memory chat`)."""

    max_iterations: int = Field(30, ge=1, description="Tool-loop iterations per turn.")
    disabled_toolsets: list[str] = Field(
        default_factory=list, description="Toolsets withheld from the model (e.g. memory)."
    )
    context_file_char_cap: int = Field(
        20_000, ge=1000, description="Characters of a project context file (AGENTS.md...)."
    )


class McpSettings(_Section):
    """`hermes-memory mcp serve`: the memory layers served over the Model Context Protocol."""

    user: str | None = Field(
        None, description="User id of stdio clients (`--user` wins); unset = the no-user scope."
    )
    host: str = Field("127.0.0.1", description="HTTP bind address (loopback unless told).")
    port: int = Field(8765, ge=0, le=65535, description="HTTP port (0 = any free port).")
    skill_manage: bool = Field(
        False, description="Offer skill_manage to MCP clients (skills are shared by all users)."
    )
    disabled_tools: list[str] = Field(
        default_factory=list, description="Tool names never offered to MCP clients."
    )
    tool_timeout: float = Field(
        30.0, gt=0, description="Seconds an MCP tool call may run before it answers an error."
    )
    session_idle_timeout: float = Field(
        1800.0, gt=0, description="Seconds without a request before an MCP session is closed."
    )


class HermesSettings(HermesBaseSettings):
    """Root of the settings tree (``$HERMES_HOME/config.yaml`` plus ``HERMES_*`` env)."""

    memory: MemorySettings = Field(default_factory=MemorySettings, description="Memory.")
    sessions: SessionsSettings = Field(
        default_factory=SessionsSettings, description="Session archive."
    )
    skills: SkillsSettings = Field(default_factory=SkillsSettings, description="Skills.")
    compression: CompressionSettings = Field(
        default_factory=CompressionSettings, description="Context compression."
    )
    review: ReviewSettings = Field(default_factory=ReviewSettings, description="Background review.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="Language model.")
    agent: AgentSettings = Field(default_factory=AgentSettings, description="Agent loop.")
    mcp: McpSettings = Field(default_factory=McpSettings, description="MCP server.")

    @model_validator(mode="after")
    def _memory_url_falls_back_to_sessions_url(self) -> HermesSettings:
        """``memory.store: postgresql`` without ``memory.url`` uses the session archive's
        ``sessions.url`` (one server for both); nothing changes for ``memory.store: files``."""
        if self.memory.store == "postgresql" and self.memory.url is None:
            fallback: Any = getattr(self.sessions, "url", None)
            if isinstance(fallback, SecretStr):
                fallback = fallback.get_secret_value()
            if isinstance(fallback, str) and fallback.strip():
                self.memory.url = SecretStr(fallback.strip())
        return self


__all__ = [
    "AgentSettings",
    "AuxiliarySettings",
    "CompressionSettings",
    "HermesSettings",
    "LLMRoute",
    "LLMSettings",
    "McpSettings",
    "MemorySettings",
    "ReviewSettings",
    "SessionsSettings",
    "SkillsSettings",
]
