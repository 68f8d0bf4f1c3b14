"""Settings of the ByteRover provider (``memory.providers.byterover``).

Sources, first wins: explicit values, ``HERMES_MEMORY__PROVIDERS__BYTEROVER__<FIELD>`` (and
``BRV_API_KEY`` for the key, as in Hermes Agent), ``$HERMES_HOME/.env``, config.yaml, the
defaults below. ``hermes-memory memory setup byterover`` asks where ``brv`` is and the optional
cloud key; the rest keeps its defaults (``--advanced`` asks them too).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import SecretStr

from hermes_core.providers.base import setup_field
from hermes_core.providers.service.fields import (
    ServiceProviderSettings,
    advanced_field,
    env_field,
    service_field,
)


class ByteRoverSettings(ServiceProviderSettings):
    """Where ``brv`` is, how long each command may take, and what is curated."""

    setup_note: ClassVar[str] = (
        "ByteRover keeps a local knowledge tree through its `brv` command-line tool: install "
        "it with `npm install -g byterover-cli` (Node.js 20+). A ByteRover account is only "
        "needed for cloud sync."
    )

    brv_path: str = setup_field(
        "brv", description="The brv command: a name on PATH or a full path", min_length=1
    )
    api_key: SecretStr | None = env_field(
        "byterover",
        "api_key",
        None,
        "BRV_API_KEY",
        description="ByteRover API key for cloud sync (blank = local only)",
        url="https://app.byterover.dev",
    )
    timeout_query: float = advanced_field(
        10.0,
        "Seconds a `brv query` may take (automatic recall also stops at memory.prefetch_timeout)",
        ge=0.01,
        le=3600,
    )
    timeout_curate: float = advanced_field(
        120.0, "Seconds a `brv curate` may take", ge=0.01, le=3600
    )
    timeout_status: float = advanced_field(
        15.0, "Seconds a `brv status` may take", ge=0.01, le=3600
    )
    auto_extract: bool = advanced_field(
        True,
        "Curate completed turns, mirrored memory writes and context about to be compressed",
    )
    curate_detach: bool = advanced_field(
        True,
        "Automatic curation queues the task in brv and returns (brv --detach) "
        "instead of waiting for it",
    )
    recall_command: Literal["query", "search"] = advanced_field(
        "query",
        "query = brv's tiered retrieval (may use its LLM); search = plain BM25 "
        "search of the tree (no LLM, faster)",
    )
    min_query_chars: int = advanced_field(
        10, "Prompts under this length skip recall (a Chinese character counts 3)", ge=0, le=1000
    )
    recall_max_chars: int = service_field("recall_max_chars")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field("breaker_cooldown")


__all__ = ["ByteRoverSettings"]
