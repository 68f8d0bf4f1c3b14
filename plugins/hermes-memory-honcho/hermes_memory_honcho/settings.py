"""Settings of the honcho provider (spec §4, Honcho).

Sources, first wins: init, ``HERMES_MEMORY__PROVIDERS__HONCHO__<FIELD>`` and the Honcho env
names (``HONCHO_API_KEY``, ``HONCHO_BASE_URL``, ``HONCHO_WORKSPACE``, ``HONCHO_TIMEOUT``),
``$HERMES_HOME/.env``, ``memory.providers.honcho`` in config.yaml, then
``$HERMES_HOME/honcho.json`` (the file Hermes Agent writes: camelCase keys, with a
``hosts.hermes`` block that overrides the root; see the provider's ``config_values``), then the
defaults below. ``hermes-memory memory setup honcho`` asks only the key, the URL and the workspace.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from hermes_core.providers.service.fields import (
    BaseURL,
    ServiceProviderSettings,
    env_field,
    read_json_object,
    service_field,
)

CONFIG_FILE = "honcho.json"
CLOUD_URL = "https://api.honcho.dev"
KEY_URL = "https://app.honcho.dev"
_field = partial(env_field, "honcho")
_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")

ReasoningLevel = Literal["minimal", "low", "medium", "high", "max"]
RecallMode = Literal["hybrid", "context", "tools"]
ObservationMode = Literal["directional", "unified"]
SessionStrategy = Literal["per-directory", "per-repo", "per-session", "global"]
WriteMode = Literal["async", "turn", "session"]


class HonchoSettings(ServiceProviderSettings):
    """Configuration of :class:`hermes_memory_honcho.provider.HonchoProvider`."""

    setup_note = (
        f"Honcho Cloud needs an API key: get one at {KEY_URL}. A self-hosted Honcho needs only "
        "its URL (leave the key blank)."
    )

    api_key: SecretStr | None = _field(
        "api_key",
        None,
        "HONCHO_API_KEY",
        description="Honcho API key (blank for a self-hosted Honcho without auth)",
        url=KEY_URL,
    )
    base_url: BaseURL = _field(
        "base_url",
        CLOUD_URL,
        "HONCHO_BASE_URL",
        description="Honcho URL: Honcho Cloud, or your self-hosted server "
        "(e.g. http://127.0.0.1:8000)",
    )
    workspace: str = _field(
        "workspace",
        "hermes",
        "HONCHO_WORKSPACE",
        description="Honcho workspace that holds this agent's peers and sessions",
        pattern=r"^[A-Za-z0-9_-]{1,100}$",
    )
    peer_name: str | None = Field(
        None,
        description="User peer for sessions that carry no user_id (a session's own user_id "
        "always wins). Default: 'user'.",
    )
    ai_peer: str = Field(
        "hermes",
        pattern=r"^[A-Za-z0-9_-]{1,100}$",
        description="The AI peer of this agent profile (one per Hermes home).",
    )
    context_tokens: int | None = Field(
        None, ge=100, le=100_000, description="Token cap of session context (empty: uncapped)."
    )
    context_cadence: int = Field(
        1, ge=1, le=100, description="Refresh the base context every N turns (background)."
    )
    dialectic_cadence: int = Field(
        2, ge=1, le=100, description="Ask Honcho's dialectic (peer chat) every N turns."
    )
    dialectic_depth: int = Field(
        1, description="Dialectic passes per cycle (clamped to 1-3; later passes refine)."
    )
    dialectic_reasoning_level: ReasoningLevel = Field(
        "low", description="Reasoning level of the automatic dialectic."
    )
    dialectic_dynamic: bool = Field(
        True, description="Raise the reasoning level one step for long, complex messages."
    )
    dialectic_max_chars: int = Field(
        600, ge=50, le=20_000, description="Characters of dialectic answer injected per turn."
    )
    dialectic_max_input_chars: int = Field(
        10_000, ge=100, le=10_000, description="Characters of a dialectic question sent."
    )
    recall_mode: RecallMode = Field(
        "hybrid",
        description="hybrid = inject context and offer tools; context = inject only; "
        "tools = tools only.",
    )
    write_frequency: WriteMode | int = Field(
        "async",
        description="When turns are written: async/turn = after each turn (background), "
        "session = at session end, N = every N turns.",
    )
    save_messages: bool = Field(True, description="Write conversation messages to Honcho.")
    observation_mode: ObservationMode = Field(
        "directional",
        description="directional = the AI peer observes the user; unified = the user peer "
        "observes itself.",
    )
    message_max_chars: int = Field(
        25_000, ge=100, le=25_000, description="Longer messages are sent in chunks."
    )
    session_strategy: SessionStrategy = Field(
        "per-directory",
        description="Honcho session per working directory, per git repo, per Hermes session, "
        "or one global session (always per user).",
    )
    timeout: float = _field(
        "timeout", 5.0, None, "HONCHO_TIMEOUT", le=120, description="Seconds per Honcho request."
    )
    retries: int = service_field("retries")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field("breaker_cooldown")
    search_limit: int = Field(
        8, ge=1, le=100, description="Messages recalled by search (prefetch and honcho_search)."
    )
    prefetch_max_chars: int = Field(
        6000, ge=200, le=50_000, description="Characters of recalled context per turn."
    )

    @field_validator("dialectic_depth")
    @classmethod
    def _clamp_depth(cls, value: int) -> int:
        return max(1, min(3, int(value)))

    @field_validator("write_frequency", mode="before")
    @classmethod
    def _write_frequency(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            raise ValueError("write_frequency N must be >= 1")
        return value

    @field_validator("peer_name")
    @classmethod
    def _peer(cls, value: str | None) -> str | None:
        return (value or "").strip() or None

    def is_self_hosted(self) -> bool:
        return self.base_url != CLOUD_URL


_CAMEL = {
    "apiKey": "api_key",
    "baseUrl": "base_url",
    "peerName": "peer_name",
    "aiPeer": "ai_peer",
    "contextTokens": "context_tokens",
    "contextCadence": "context_cadence",
    "dialecticCadence": "dialectic_cadence",
    "dialecticDepth": "dialectic_depth",
    "dialecticReasoningLevel": "dialectic_reasoning_level",
    "dialecticDynamic": "dialectic_dynamic",
    "dialecticMaxChars": "dialectic_max_chars",
    "dialecticMaxInputChars": "dialectic_max_input_chars",
    "recallMode": "recall_mode",
    "writeFrequency": "write_frequency",
    "saveMessages": "save_messages",
    "observationMode": "observation_mode",
    "messageMaxChars": "message_max_chars",
    "sessionStrategy": "session_strategy",
}


def read_honcho_json(home: Path) -> dict[str, Any]:
    """Fields from ``$HERMES_HOME/honcho.json`` (``{}`` when absent): root keys, then the
    ``hosts.hermes`` block on top. Raises ConfigError naming the file on invalid JSON."""
    data = read_json_object(Path(home) / CONFIG_FILE)
    merged = {k: v for k, v in data.items() if k != "hosts"}
    hosts = data.get("hosts")
    if isinstance(hosts, dict) and isinstance(hosts.get("hermes"), dict):
        merged.update(hosts["hermes"])
    return {_CAMEL.get(k, k): v for k, v in merged.items() if v is not None}


__all__ = [
    "CLOUD_URL",
    "CONFIG_FILE",
    "KEY_URL",
    "HonchoSettings",
    "read_honcho_json",
]
