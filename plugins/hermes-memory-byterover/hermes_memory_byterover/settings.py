"""Settings of the ByteRover provider (``memory.providers.byterover``).

Sources, first wins: explicit values, ``HERMES_MEMORY__PROVIDERS__BYTEROVER__<FIELD>`` (and
``BRV_API_KEY`` for the key, as in Hermes Agent), ``$HERMES_HOME/.env``, config.yaml, the
defaults below. ``hermes-memory memory setup byterover`` asks where ``brv`` is and the optional
cloud key; the rest keeps its defaults (``--advanced`` asks them too).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from hermes_core.providers.base import ProviderSettings, setup_field
from hermes_core.providers.service.fields import (
    breaker_cooldown_field,
    env_alias,
    failure_threshold_field,
    recall_max_chars_field,
)


class ByteRoverSettings(ProviderSettings):
    """Where ``brv`` is, how long each command may take, and what is curated."""

    model_config = SettingsConfigDict(extra="ignore", validate_default=True, populate_by_name=True)

    setup_note: ClassVar[str] = (
        "ByteRover keeps a local knowledge tree through its `brv` command-line tool: install "
        "it with `npm install -g byterover-cli` (Node.js 20+). A ByteRover account is only "
        "needed for cloud sync."
    )

    brv_path: str = setup_field(
        "brv",
        description="The brv command: a name on PATH or a full path",
        min_length=1,
    )
    api_key: SecretStr | None = setup_field(
        None,
        description="ByteRover API key for cloud sync (blank = local only)",
        env_var="BRV_API_KEY",
        url="https://app.byterover.dev",
        validation_alias=env_alias("byterover", "api_key", "BRV_API_KEY"),
    )
    timeout_query: float = setup_field(
        10.0,
        description="Seconds a `brv query` may take (automatic recall also stops at "
        "memory.prefetch_timeout)",
        setup="advanced",
        ge=0.01,
        le=3600,
    )
    timeout_curate: float = setup_field(
        120.0, description="Seconds a `brv curate` may take", setup="advanced", ge=0.01, le=3600
    )
    timeout_status: float = setup_field(
        15.0, description="Seconds a `brv status` may take", setup="advanced", ge=0.01, le=3600
    )
    auto_extract: bool = setup_field(
        True,
        description="Curate completed turns, mirrored memory writes and context about to be "
        "compressed",
        setup="advanced",
    )
    curate_detach: bool = setup_field(
        True,
        description="Automatic curation queues the task in brv and returns (brv --detach) "
        "instead of waiting for it",
        setup="advanced",
    )
    recall_command: Literal["query", "search"] = setup_field(
        "query",
        description="query = brv's tiered retrieval (may use its LLM); search = plain BM25 "
        "search of the tree (no LLM, faster)",
        setup="advanced",
    )
    min_query_chars: int = setup_field(
        10,
        description="Prompts shorter than this are not looked up (a Chinese character counts 3)",
        setup="advanced",
        ge=0,
        le=1000,
    )
    recall_max_chars: int = recall_max_chars_field()
    failure_threshold: int = failure_threshold_field()
    breaker_cooldown: float = breaker_cooldown_field()


__all__ = ["ByteRoverSettings"]
